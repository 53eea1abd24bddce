package dev.consistencykit.twophase;

/** The source account's balance does not cover the amount. The transaction was canceled with no net effect. */
public class InsufficientFundsException extends TransactionCanceledException {

    private static final long serialVersionUID = 1L;

    /** See {@link TransactionCanceledException#TransactionCanceledException}. */
    public InsufficientFundsException(String instanceName, Object transactionId, String reasonCode, String participant,
            String message) {
        super(instanceName, transactionId, reasonCode, participant, message);
    }
}
