package dev.consistencykit.core.spi;

import java.time.Duration;
import java.util.List;

import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.KeptRecord;
import dev.consistencykit.core.OperationView;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.StrategyStatus;

/**
 * What an entry type asks of its pattern's engine for the lifecycle every pattern shares: setup, recovery, the
 * operator's reads and the counters. Each pattern's engine (in its {@code internal} package) implements it; the
 * pattern's own operations stay on the engine's own methods.
 *
 * @param <M> the pattern's counters
 */
public interface StrategyEngine<M extends Record> {

    /** Creates the indexes the pattern's queries and its safety need, and registers the instance. */
    void ensureIndexes();

    /** Finishes or undoes what was left unfinished longer than {@code staleAfter} (zero: everything unfinished). */
    RecoveryReport recover(Duration staleAfter);

    /** {@link #recover(Duration)} restricted to the operation {@code id}. */
    RecoveryReport recoverOne(Object id, Duration staleAfter);

    /** The operation {@code id}: its record and the documents it touches as a reader sees them; empty if none. */
    java.util.Optional<OperationView> describe(Object id);

    /**
     * Operations that reached a terminal state within the last {@code window} (server time), counted by an index, at
     * most {@code cap}; empty for a pattern that keeps no indexed completion time.
     */
    default java.util.OptionalLong finishedSince(Duration window, int cap) {
        return java.util.OptionalLong.empty();
    }

    /** Operations left unfinished longer than {@code staleAfter}, oldest first, at most {@code limit}. */
    List<InterruptedOperation> interrupted(Duration staleAfter, int limit);

    /** Operations by state. */
    StrategyStatus status();

    /**
     * Records their writers have not released ({@link RecordReleases}) older than {@code olderThan}, at most
     * {@code limit}; empty for a pattern whose records carry no hold.
     */
    default List<KeptRecord> kept(Duration olderThan, int limit) {
        return List.of();
    }

    /** Releases what this instance holds ({@link RecordReleases#flush}); the instance stays usable. */
    default void close() {
    }

    /** The counters since the engine was built. */
    M metrics();

    /**
     * What the pattern's safety rests on that the server does not give it now: each unique index it needs, read
     * from the server. Empty for a pattern whose safety rests on no index but {@code _id}'s.
     */
    default List<String> setupProblems() {
        return List.of();
    }
}
