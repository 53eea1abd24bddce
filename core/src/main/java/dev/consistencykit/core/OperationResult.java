package dev.consistencykit.core;

import java.util.Objects;
import java.util.Optional;

/**
 * Where one operation ended up after {@link ConsistencyStrategy#apply}.
 *
 * @param id      the operation's id
 * @param outcome committed, aborted (no net effect), or still in flight
 * @param state   the pattern's own name for the state it is in (for example {@code done} or {@code canceled})
 * @param reason  why it was aborted, when it was
 */
public record OperationResult(OperationId id, Outcome outcome, String state, Optional<String> reason) {

    /** What an operation's effect is. */
    public enum Outcome {
        /** Its whole effect is applied and will stay applied. */
        COMMITTED,
        /** It has no net effect on any document and never will have. */
        ABORTED,
        /**
         * Recorded but not yet terminal: it will be committed or aborted by whoever drives it next
         * (a worker, or recovery).
         */
        IN_FLIGHT
    }

    /** Validates the components. */
    public OperationResult {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(reason, "reason");
    }

    /** A committed result in the given state. */
    public static OperationResult committed(OperationId id, String state) {
        return new OperationResult(id, Outcome.COMMITTED, state, Optional.empty());
    }

    /** An aborted result in the given state, with its reason. */
    public static OperationResult aborted(OperationId id, String state, String reason) {
        return new OperationResult(id, Outcome.ABORTED, state, Optional.ofNullable(reason));
    }

    /** A result that is not terminal yet. */
    public static OperationResult inFlight(OperationId id, String state) {
        return new OperationResult(id, Outcome.IN_FLIGHT, state, Optional.empty());
    }

    /** Whether the operation is committed. */
    public boolean isCommitted() {
        return outcome == Outcome.COMMITTED;
    }
}
