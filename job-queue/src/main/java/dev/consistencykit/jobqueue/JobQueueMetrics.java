package dev.consistencykit.jobqueue;

/**
 * A read-only snapshot of one {@link JobQueue} instance's counters since it was built.
 *
 * @param enqueued   jobs this instance recorded
 * @param done       jobs this instance completed
 * @param failed     attempts this instance failed (retried later)
 * @param dead       jobs this instance sent dead
 * @param requeued   jobs this instance's sweeper requeued
 * @param leaseLost  completions refused because another worker held the job
 * @param relayed    jobs moved from a business document's outbox into the queue
 * @param pruned     done jobs deleted after their retention
 */
public record JobQueueMetrics(long enqueued, long done, long failed, long dead, long requeued, long leaseLost,
                              long relayed, long pruned) {
}
