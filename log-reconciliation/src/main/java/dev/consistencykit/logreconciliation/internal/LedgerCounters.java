package dev.consistencykit.logreconciliation.internal;

import java.util.concurrent.atomic.LongAdder;

import dev.consistencykit.logreconciliation.LedgerMetrics;

/** The counters of one ledger, written by the parts that count and read as {@link LedgerMetrics}. */
final class LedgerCounters {

    final LongAdder appended = new LongAdder();
    final LongAdder collisions = new LongAdder();
    final LongAdder headQueries = new LongAdder();
    final LongAdder committed = new LongAdder();
    final LongAdder canceled = new LongAdder();
    final LongAdder gapsFilled = new LongAdder();
    final LongAdder moved = new LongAdder();
    final LongAdder archived = new LongAdder();

    LedgerMetrics read() {
        return new LedgerMetrics(appended.sum(), collisions.sum(), headQueries.sum(), committed.sum(), canceled.sum(),
                gapsFilled.sum(), moved.sum(), archived.sum());
    }
}
