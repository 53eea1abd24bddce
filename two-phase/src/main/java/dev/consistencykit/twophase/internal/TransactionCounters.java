package dev.consistencykit.twophase.internal;

import java.util.concurrent.atomic.LongAdder;

import dev.consistencykit.twophase.TwoPhaseMetrics;

/** The counters of one two-phase instance, written by the parts that count and read as {@link TwoPhaseMetrics}. */
final class TransactionCounters {

    final LongAdder committed = new LongAdder();
    final LongAdder canceled = new LongAdder();
    final LongAdder recoveredForward = new LongAdder();
    final LongAdder recoveredBack = new LongAdder();
    final LongAdder leaseLost = new LongAdder();
    final LongAdder commitStuck = new LongAdder();
    final LongAdder pruned = new LongAdder();

    TwoPhaseMetrics read() {
        return new TwoPhaseMetrics(committed.sum(), canceled.sum(), recoveredForward.sum(), recoveredBack.sum(),
                leaseLost.sum(), commitStuck.sum(), pruned.sum());
    }
}
