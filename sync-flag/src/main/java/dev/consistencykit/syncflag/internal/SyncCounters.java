package dev.consistencykit.syncflag.internal;

import java.util.concurrent.atomic.LongAdder;

import dev.consistencykit.syncflag.SyncFlagMetrics;

/** The counters of one sync flag instance, written by the parts that count and read as {@link SyncFlagMetrics}. */
final class SyncCounters {

    final LongAdder updates = new LongAdder();
    final LongAdder propagations = new LongAdder();
    final LongAdder copiesWritten = new LongAdder();
    final LongAdder copiesRepaired = new LongAdder();
    final LongAdder flagsTakenOver = new LongAdder();
    final LongAdder flagsLeft = new LongAdder();

    SyncFlagMetrics read() {
        return new SyncFlagMetrics(updates.sum(), propagations.sum(), copiesWritten.sum(), copiesRepaired.sum(),
                flagsTakenOver.sum(), flagsLeft.sum());
    }
}
