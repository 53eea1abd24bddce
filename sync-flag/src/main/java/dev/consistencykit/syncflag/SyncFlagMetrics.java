package dev.consistencykit.syncflag;

/**
 * A read-only snapshot of one {@link SyncFlag} instance's counters since it was built. Database-wide staleness
 * (masters flagged now, the oldest flag's age) is in {@link SyncFlag#status()}.
 *
 * @param updates         master updates this instance applied
 * @param propagations    propagations this instance finished (its own updates, sweeps, read repairs, resyncs)
 * @param copiesWritten   target documents its updates' own propagations changed
 * @param copiesRepaired  target documents changed by its sweeps, read repairs and resyncs: copies found stale
 * @param flagsTakenOver  stale flags its sweeper or read repair took over
 * @param flagsLeft       propagations that left the flag to a newer update
 */
public record SyncFlagMetrics(long updates, long propagations, long copiesWritten, long copiesRepaired,
                              long flagsTakenOver, long flagsLeft) {
}
