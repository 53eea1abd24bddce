package dev.consistencykit.twophase;

/** The server refused a participant's prepare update (for example $inc on a field that is not a number). The transaction was canceled with no net effect. */
public class ParticipantRejectedException extends TransactionCanceledException {

    private static final long serialVersionUID = 1L;

    /** See {@link TransactionCanceledException#TransactionCanceledException}. */
    public ParticipantRejectedException(String instanceName, Object transactionId, String reasonCode, String participant,
            String message) {
        super(instanceName, transactionId, reasonCode, participant, message);
    }
}
