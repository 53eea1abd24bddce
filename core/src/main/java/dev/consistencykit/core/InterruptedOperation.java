package dev.consistencykit.core;

import java.time.Duration;
import java.util.Objects;

import dev.consistencykit.core.spi.Checks;

/**
 * One operation that was started and has not finished, whose owner has made no progress for a while: what
 * {@link ConsistencyStrategy#recover(Duration)} would finish or undo.
 *
 * @param id     the operation's id (a transaction, a job, a master document, a change set…)
 * @param state  the pattern's own name for the state it is stuck in
 * @param age    how long ago, by server time, it last made progress
 * @param detail where it is (a collection, a root, participants…), for an operator
 */
public record InterruptedOperation(Object id, String state, Duration age, String detail) {

    /** Validates the components. */
    public InterruptedOperation {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(age, "age");
        Objects.requireNonNull(detail, "detail");
    }

    /**
     * Checks the arguments of {@link ConsistencyStrategy#interrupted(Duration, int)}.
     *
     * @throws IllegalArgumentException if {@code staleAfter} is negative or {@code limit} below 1
     */
    public static void checkQuery(Duration staleAfter, int limit) {
        Checks.notNegative("staleAfter", staleAfter);
        Checks.atLeast("limit", limit, 1);
    }
}
