package dev.consistencykit.twophase;

/** A participant document already carries the configured maximum of unsettled transactions. The transaction was canceled with no net effect. */
public class TooManyPendingTransactionsException extends TransactionCanceledException {

    private static final long serialVersionUID = 1L;

    /** See {@link TransactionCanceledException#TransactionCanceledException}. */
    public TooManyPendingTransactionsException(String instanceName, Object transactionId, String reasonCode, String participant,
            String message) {
        super(instanceName, transactionId, reasonCode, participant, message);
    }
}
