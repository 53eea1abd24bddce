package dev.consistencykit.jobqueue;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The jobs of one type in a queue by where they stand ({@link JobQueueOperator#backlog}): what an operator watches, and
 * what the gauges show. Each count is read up to {@link JobQueueOperator#BACKLOG_CAP} jobs: beyond, it says "at least".
 *
 * @param type          the job type
 * @param waiting       jobs due now (queued, or failed and past their back-off), not yet claimed
 * @param scheduled     jobs due later (a delay, or a back-off after a failed attempt)
 * @param awaiting      jobs of an ordering or concurrency key whose turn has not come
 * @param running       jobs a worker holds
 * @param dead          dead jobs, waiting for an operator's replay or discard
 * @param oldestWaiting how long the oldest due job has waited past its run-at time, if any is due
 */
public record JobBacklog(String type, long waiting, long scheduled, long awaiting, long running, long dead,
                         Optional<Duration> oldestWaiting) {

    public JobBacklog {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(oldestWaiting, "oldestWaiting");
    }
}
