package dev.consistencykit.jobqueue.internal;

import java.util.concurrent.atomic.LongAdder;

import dev.consistencykit.jobqueue.JobQueueMetrics;

/** The counters of one job queue, written by the parts that count and read as {@link JobQueueMetrics}. */
final class JobCounters {

    final LongAdder enqueued = new LongAdder();
    final LongAdder done = new LongAdder();
    final LongAdder failed = new LongAdder();
    final LongAdder dead = new LongAdder();
    final LongAdder requeued = new LongAdder();
    final LongAdder leaseLost = new LongAdder();
    final LongAdder relayed = new LongAdder();
    final LongAdder pruned = new LongAdder();

    JobQueueMetrics read() {
        return new JobQueueMetrics(enqueued.sum(), done.sum(), failed.sum(), dead.sum(), requeued.sum(),
                leaseLost.sum(), relayed.sum(), pruned.sum());
    }
}
