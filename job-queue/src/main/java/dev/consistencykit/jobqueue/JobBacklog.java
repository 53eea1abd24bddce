package dev.consistencykit.jobqueue;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The work waiting in a queue for one job type ({@link JobQueue#backlog}): what an operator watches besides the dead.
 *
 * @param type          the job type
 * @param waiting       jobs due now (queued, or failed and past their back-off), not yet claimed
 * @param scheduled     jobs due later (a delay, or a back-off after a failed attempt)
 * @param oldestWaiting how long the oldest due job has waited past its run-at time, if any is due
 */
public record JobBacklog(String type, long waiting, long scheduled, Optional<Duration> oldestWaiting) {

    public JobBacklog {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(oldestWaiting, "oldestWaiting");
    }
}
