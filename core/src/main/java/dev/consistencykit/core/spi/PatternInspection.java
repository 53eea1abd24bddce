package dev.consistencykit.core.spi;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.KeptRecord;
import dev.consistencykit.core.OperationView;
import dev.consistencykit.core.StrategyStatus;

/**
 * What a pattern's operator reads answer for the lifecycle every pattern shares: one operation, the unfinished ones,
 * the states, the held records and the counters.
 *
 * @param <M> the pattern's counters
 */
public interface PatternInspection<M extends Record> {

    /** The operation {@code id} (already checked): its record and the documents it touches as a reader sees them. */
    Optional<OperationView> describe(Object id);

    /**
     * Operations that reached a terminal state within the last {@code window} (server time), counted by an index, at
     * most {@code cap}; empty for a pattern that keeps no indexed completion time.
     */
    default OptionalLong finishedSince(Duration window, int cap) {
        return OptionalLong.empty();
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

    /** The counters since the instance was built. */
    M metrics();
}
