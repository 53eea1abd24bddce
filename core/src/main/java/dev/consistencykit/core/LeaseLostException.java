package dev.consistencykit.core;

/**
 * The caller's lease on a document was taken over by another owner (its fencing token moved on), so
 * the caller's fenced write was refused. The caller must stop working on the document: someone else
 * is now responsible for it.
 */
public class LeaseLostException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    private final long fencingToken;

    /**
     * @param instanceName the instance that held the lease
     * @param documentId   the leased document
     * @param fencingToken the caller's (stale) fencing token
     * @param message      what happened
     */
    public LeaseLostException(String instanceName, Object documentId, long fencingToken, String message) {
        super(instanceName, documentId, message);
        this.fencingToken = fencingToken;
    }

    /** The fencing token the refused write carried. */
    public long fencingToken() {
        return fencingToken;
    }
}
