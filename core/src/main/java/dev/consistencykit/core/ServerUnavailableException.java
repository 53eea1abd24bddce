package dev.consistencykit.core;

/**
 * The request could not be carried out now, and nothing was written by it: the server could not be reached and the
 * request is known not to have been sent (for example no server could be selected before the timeout), or concurrent
 * writers refused every attempt until the call's deadline (write conflicts, deadlocks; the ledger's sequence numbers
 * taken by other appends). Calling again with the same id is safe.
 */
public class ServerUnavailableException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param instanceName the instance that tried
     * @param documentId   the document or operation concerned, may be {@code null}
     * @param message      what was being done
     * @param cause        the last error seen
     */
    public ServerUnavailableException(String instanceName, Object documentId, String message, Throwable cause) {
        super(instanceName, documentId, message, cause);
    }
}
