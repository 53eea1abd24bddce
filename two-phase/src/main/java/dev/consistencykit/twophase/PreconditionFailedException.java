package dev.consistencykit.twophase;

/** A participant document did not match its precondition (for the transfer preset: the account is closed). The transaction was canceled with no net effect. */
public class PreconditionFailedException extends TransactionCanceledException {

    private static final long serialVersionUID = 1L;

    /** See {@link TransactionCanceledException#TransactionCanceledException}. */
    public PreconditionFailedException(String instanceName, Object transactionId, String reasonCode, String participant,
            String message) {
        super(instanceName, transactionId, reasonCode, participant, message);
    }
}
