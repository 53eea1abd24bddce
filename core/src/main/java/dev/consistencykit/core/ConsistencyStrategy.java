package dev.consistencykit.core;

import java.time.Duration;

import dev.consistencykit.core.spi.RecordReleases;

/**
 * One pattern for making a multi-document change reliable without native transactions.
 *
 * <p>Every implementation follows the same protocol: <em>record the intent with one atomic write → apply it
 * with guarded, idempotent single-document writes → mark it terminal</em>. A recovery pass finds
 * interrupted operations by an indexed query and finishes or undoes them; it is safe to run at start-up,
 * periodically and from many processes at once.
 *
 * <p>Implementations are thread-safe: one instance may be shared by any number of threads, and any number of
 * instances (in any number of processes) may work on the same collections. Safety never depends on clocks:
 * clocks only decide when recovery may take over an operation whose owner went quiet.
 *
 * <pre>{@code
 * ConsistencyStrategy<TwoPhaseTransaction> strategy = TwoPhaseCommit.builder(database).name("payments").build();
 * strategy.ensureIndexes();
 * OperationResult result = strategy.apply(transaction); // driven to a terminal state in this thread
 * strategy.recover(Duration.ofMinutes(1));             // at start-up and periodically
 * }</pre>
 *
 * @param <C> the pattern's change type
 */
public interface ConsistencyStrategy<C> extends AutoCloseable {

    /** The instance name, used in every log line, metric and exception of this instance. */
    String name();

    /**
     * Records this pattern's writers have not released ({@link RecordReleases}) older than {@code olderThan}, at most
     * {@code limit}, with their writer and age: what an operator looks at when records stay past their retention.
     * Empty for a pattern whose records carry no hold.
     */
    default java.util.List<KeptRecord> kept(Duration olderThan, int limit) {
        return java.util.List.of();
    }

    /**
     * Releases the records this instance wrote and still holds, so that prune and archive may remove them in their
     * time; throws nothing (a failure is logged and the records stay held until a later release). The instance stays
     * usable. Spring calls it when the context closes; call it when the application stops using the instance.
     */
    @Override
    default void close() {
    }

    /**
     * The quick checks of the server contract this instance's safety rests on, read now: the unique indexes it
     * needs exist as declared (someone may have dropped one since start-up) and the driver is at or above the floor.
     * For health checks; a write checks the indexes itself before it is sent.
     *
     * @return one line per problem; empty when all is well
     */
    default java.util.List<String> setupProblems() {
        return java.util.List.of();
    }

    /**
     * The pattern, as the CLI, the metrics and the observations spell it: {@code two-phase}, {@code job-queue},
     * {@code sync-flag}, {@code log-reconciliation}, {@code versioning}. Another implementation answers its class's
     * simple name unless it says otherwise.
     */
    default String pattern() {
        return getClass().getSimpleName();
    }

    /**
     * Creates every index the strategy's queries need on a real MongoDB server. Idempotent.
     */
    void ensureIndexes();

    /**
     * Durably records the intent of {@code change} with one atomic write and returns its id, without applying
     * it. Idempotent for a caller-supplied id: the same id with the same change returns the same id.
     *
     * @throws InvalidInputException         if the change is invalid (nothing is written)
     * @throws IdempotencyConflictException  if the id exists with a different change (nothing is written)
     * @throws OutcomeUnknownException       if the write may or may not have been recorded
     */
    OperationId submit(C change);

    /**
     * Submits {@code change} (idempotently) and drives it to a terminal state in the calling thread.
     *
     * @return how the operation ended; {@link OperationResult.Outcome#IN_FLIGHT} only when another process
     *         is driving it and it has not finished yet
     * @throws InvalidInputException         if the change is invalid (nothing is written)
     * @throws IdempotencyConflictException  if the id exists with a different change (nothing is written)
     * @throws OutcomeUnknownException       if the server stopped answering mid-way; the operation is then
     *                                       left for recovery, which will finish or undo it
     */
    OperationResult apply(C change);

    /**
     * Finishes or undoes every operation interrupted for longer than {@code staleAfter}, measured by the
     * server's clock. Safe to run concurrently from many processes: each interrupted operation is driven by
     * exactly one of them.
     *
     * @param staleAfter how long an operation must have made no progress before it is taken over; zero takes
     *                   over every operation not terminal
     * @throws IllegalArgumentException if {@code staleAfter} is negative
     */
    RecoveryReport recover(Duration staleAfter);

    /**
     * {@link #recover(Duration)} with the instance's own staleness threshold (its builder's {@code staleAfter}): what
     * to run at start-up and periodically. Every pattern overrides it with its configured threshold; the default, for
     * other implementations, is one minute.
     */
    default RecoveryReport recover() {
        return recover(Duration.ofMinutes(1));
    }

    /**
     * {@link #recover(Duration)} for one operation: finishes or undoes {@code id} (as {@link #interrupted} lists it) if
     * it was started, is not finished and has made no progress for {@code staleAfter}; by the same fenced
     * compare-and-sets as a whole pass, so it is as safe beside owners, workers and other recoverers. For an operator
     * who repairs one operation he looked at.
     *
     * @param id         the operation's id
     * @param staleAfter how long it must have made no progress; zero takes it over whatever its age
     * @return what was done: {@code examined} is 0 when there is no such operation in flight that long
     * @throws IllegalArgumentException if {@code staleAfter} is negative
     */
    RecoveryReport recoverOne(Object id, Duration staleAfter);

    /**
     * One operation as an operator opens it: its record and the documents it touches, as a reader sees them now.
     * Read-only; bounded by the documents the operation names.
     *
     * @param id the operation's id (as {@link #interrupted} lists it)
     * @return empty when the pattern keeps no record of {@code id}
     */
    java.util.Optional<OperationView> describe(Object id);

    /**
     * How many operations reached a terminal state within the last {@code window} (server time), counted by an
     * index and at most {@code cap}: what a page polls to draw throughput without reading every record. Empty for a
     * pattern that keeps no indexed completion time.
     *
     * @throws IllegalArgumentException if {@code window} is negative or {@code cap} below 1
     */
    default java.util.OptionalLong finishedWithin(Duration window, int cap) {
        return java.util.OptionalLong.empty();
    }

    /**
     * The operations that were started and have made no progress for longer than {@code staleAfter} (server time):
     * those {@link #recover(Duration)} with the same threshold would finish or undo, oldest first. Read-only.
     *
     * @param staleAfter how long an operation must have made no progress; zero lists every one started and not done
     * @param limit      the most to return
     * @throws IllegalArgumentException if {@code staleAfter} is negative or {@code limit} below 1
     */
    java.util.List<InterruptedOperation> interrupted(Duration staleAfter, int limit);

    /** Counts per state and the age of the oldest operation in flight, read from the database. */
    StrategyStatus status();

    /** What this pattern guarantees, for comparisons and documentation. */
    Guarantees guarantees();

    /**
     * The periodic steps this strategy needs, for {@link Maintenance} (or the application's own scheduler): each is
     * idempotent and safe from every process at once. The default is one recovery pass a minute for operations
     * interrupted for a minute; patterns add their own (pruning, settling, relaying).
     */
    default java.util.List<MaintenanceStep> maintenance() {
        return java.util.List.of(MaintenanceStep.of(name() + " recover", Duration.ofMinutes(1),
                () -> recover(Duration.ofMinutes(1))));
    }

    /**
     * This instance's counters (operations committed, canceled, recovered…) by name, since it was built: what a
     * metrics binding publishes. Reads no data. Default: none.
     */
    default java.util.Map<String, Long> counters() {
        return java.util.Map.of();
    }
}
