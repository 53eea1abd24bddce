package dev.consistencykit.core;

/**
 * The server refused a request for a reason retrying will not change: an authorization error, a validator, a
 * command it does not support. The driver's exception is the cause. A write refused this way was not applied.
 */
public class ServerRefusedException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param instanceName the instance whose request was refused
     * @param documentId   the document or operation concerned, may be {@code null}
     * @param message      what was being done, and the server's reason
     * @param cause        the driver's exception
     */
    public ServerRefusedException(String instanceName, Object documentId, String message, Throwable cause) {
        super(instanceName, documentId, message, cause);
    }
}
