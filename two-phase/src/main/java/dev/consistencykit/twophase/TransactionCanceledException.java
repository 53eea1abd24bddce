package dev.consistencykit.twophase;

import dev.consistencykit.core.ConsistencyException;

/**
 * A two-phase transaction was canceled because a participant could not be prepared; it had no net effect on any
 * participant. Subclasses name the reason.
 */
public class TransactionCanceledException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    private final String reasonCode;
    private final String participant;

    /**
     * @param instanceName  the two-phase instance
     * @param transactionId the canceled transaction
     * @param reasonCode    the stored reason code ({@code INSUFFICIENT_FUNDS}, {@code PRECONDITION_FAILED}…)
     * @param participant   the participant that could not be prepared, as {@code collection/id}
     * @param message       what happened
     */
    public TransactionCanceledException(String instanceName, Object transactionId, String reasonCode,
                                        String participant, String message) {
        super(instanceName, transactionId, message);
        this.reasonCode = reasonCode;
        this.participant = participant;
    }

    /** The stored reason code. */
    public String reasonCode() {
        return reasonCode;
    }

    /** The reason, when it is one this version knows ({@link CancellationReason}). */
    public java.util.Optional<CancellationReason> reason() {
        return CancellationReason.fromStored(reasonCode);
    }

    /** The participant that could not be prepared, as {@code collection/id}. */
    public String participant() {
        return participant;
    }
}
