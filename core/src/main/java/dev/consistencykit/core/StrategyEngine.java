package dev.consistencykit.core;

import java.time.Duration;
import java.util.List;

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

    /** Operations left unfinished longer than {@code staleAfter}, oldest first, at most {@code limit}. */
    List<InterruptedOperation> interrupted(Duration staleAfter, int limit);

    /** Operations by state. */
    StrategyStatus status();

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
