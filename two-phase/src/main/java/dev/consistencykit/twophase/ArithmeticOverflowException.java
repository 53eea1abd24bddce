package dev.consistencykit.twophase;

/**
 * A participant's prepare would have taken an integer field past the range of a 64-bit integer (an {@code $inc}
 * past {@code Long.MAX_VALUE} or below {@code Long.MIN_VALUE}): the guard refused it, and the transaction was canceled
 * with no net effect ({@link CancellationReason#OVERFLOW}).
 */
public class ArithmeticOverflowException extends TransactionCanceledException {

    private static final long serialVersionUID = 1L;

    /** See {@link TransactionCanceledException#TransactionCanceledException}. */
    public ArithmeticOverflowException(String instanceName, Object transactionId, String reasonCode,
                                       String participant, String message) {
        super(instanceName, transactionId, reasonCode, participant, message);
    }
}
