package dev.consistencykit.core;

/**
 * A write may or may not have been applied: the server may have received it, but no acknowledgement
 * came back before retries were exhausted. This is <em>not</em> a failure: the operation must not be
 * abandoned or reported as failed. Every write the toolkit sends is guarded, so the operation can be
 * safely resumed (by the caller or by recovery) and will be applied exactly once.
 */
public class OutcomeUnknownException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param instanceName the instance that sent the write
     * @param documentId   the document or operation concerned
     * @param message      what was being done
     * @param cause        the last error seen
     */
    public OutcomeUnknownException(String instanceName, Object documentId, String message, Throwable cause) {
        super(instanceName, documentId, message, cause);
    }
}
