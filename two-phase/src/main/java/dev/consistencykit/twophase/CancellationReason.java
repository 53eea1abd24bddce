package dev.consistencykit.twophase;

import java.util.Arrays;
import java.util.Optional;

/**
 * Why a transaction was canceled, as stored in its {@code reason.code} and carried by
 * {@link TransactionCanceledException#reason()}.
 */
public enum CancellationReason {
    /** A transfer's source account had less than the amount (the guard {@code balance >= amount} refused). */
    INSUFFICIENT_FUNDS,
    /** A participant document does not exist. */
    PARTICIPANT_MISSING,
    /** A participant's own precondition ({@code Participant.when}) did not hold. */
    PRECONDITION_FAILED,
    /** A participant already carried {@code maxPendingPerDocument} unsettled transactions. */
    TOO_MANY_PENDING,
    /** The server refused a participant's update (a validator, a type mismatch). */
    PARTICIPANT_REJECTED,
    /** Recovery rolled back a transaction whose owner went quiet before deciding. */
    STALE,
    /**
     * A participant's prepare would have taken an integer field past the range of a 64-bit integer ({@code $inc}
     * past {@code Long.MAX_VALUE} or below {@code Long.MIN_VALUE}); the guard refused it instead of letting it wrap.
     */
    OVERFLOW;

    /** The code stored on a canceled transaction. */
    public String stored() {
        return name();
    }

    /** The reason stored as {@code code}; empty for a code this version does not know. */
    public static Optional<CancellationReason> fromStored(String code) {
        return Arrays.stream(values()).filter(r -> r.name().equals(code)).findFirst();
    }
}
