package dev.consistencykit.core;

/**
 * The calling thread was interrupted during a call. The thread's interrupt flag is set again before this is thrown,
 * so the caller's own interruption policy still sees it. A write the call was sending may or may not have been
 * applied: an operation with a caller-supplied id can be retried with that id, and recovery finishes any other.
 */
public class OperationInterruptedException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param instanceName the instance whose call was interrupted
     * @param documentId   the document or operation concerned, may be {@code null}
     * @param message      what was being done
     * @param cause        the driver's or the JDK's interruption
     */
    public OperationInterruptedException(String instanceName, Object documentId, String message, Throwable cause) {
        super(instanceName, documentId, message, cause);
    }
}
