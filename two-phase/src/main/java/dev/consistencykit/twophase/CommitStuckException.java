package dev.consistencykit.twophase;

import dev.consistencykit.core.ConsistencyException;

/**
 * A transaction was decided committed, but the server refused a participant's commit update (the document was
 * changed out of band so that the update no longer applies). The transaction stays {@code applied}, the error is
 * recorded on it, every other participant is settled, and recovery retries the refused one on every pass; later
 * transactions on the same document are not blocked.
 */
public class CommitStuckException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param instanceName  the two-phase instance
     * @param transactionId the transaction
     * @param message       which participant and why
     * @param cause         the server's error
     */
    public CommitStuckException(String instanceName, Object transactionId, String message, Throwable cause) {
        super(instanceName, transactionId, message, cause);
    }
}
