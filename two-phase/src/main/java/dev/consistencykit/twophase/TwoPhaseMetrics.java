package dev.consistencykit.twophase;

/**
 * A read-only snapshot of one {@link TwoPhaseCommit} instance's counters since it was built.
 *
 * @param committed          transactions this instance drove to {@code done}
 * @param canceled           transactions this instance drove to {@code canceled}
 * @param recoveredForward   stale transactions recovery drove to {@code done}
 * @param recoveredBack      stale transactions recovery drove to {@code canceled}
 * @param leaseLost          transactions this instance stopped driving because another took them over
 * @param commitStuck        commit updates the server refused
 * @param pruned             terminal transactions deleted after their retention period
 */
public record TwoPhaseMetrics(long committed, long canceled, long recoveredForward, long recoveredBack,
                              long leaseLost, long commitStuck, long pruned) {
}
