package dev.consistencykit.twophase;

/** A participant document does not exist. The transaction was canceled with no net effect. */
public class ParticipantMissingException extends TransactionCanceledException {

    private static final long serialVersionUID = 1L;

    /** See {@link TransactionCanceledException#TransactionCanceledException}. */
    public ParticipantMissingException(String instanceName, Object transactionId, String reasonCode, String participant,
            String message) {
        super(instanceName, transactionId, reasonCode, participant, message);
    }
}
