package dev.consistencykit.jobqueue;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

import dev.consistencykit.core.OperationId;

/**
 * A recurring job as its schedule's document holds it: what {@link JobQueue#schedule} registered, and where it stands.
 *
 * @param name     the schedule's name, unique per queue
 * @param schedule when it runs
 * @param type     the type of the job each occurrence enqueues
 * @param nextRun  when its next occurrence is due; empty once it has none (a cron expression that names no later time)
 * @param lastRun  the time of the last occurrence fired
 * @param lastJob  the job that occurrence enqueued ({@code <name>@<occurrence time>})
 * @param paused   whether an operator paused it ({@link JobQueueOperator#pauseSchedule}): then it has no next run
 */
public record RecurringJob(String name, Schedule schedule, String type, Optional<Instant> nextRun,
                           Optional<Instant> lastRun, Optional<OperationId> lastJob, boolean paused) {

    /** Checks for nulls. */
    public RecurringJob {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(schedule, "schedule");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(nextRun, "nextRun");
        Objects.requireNonNull(lastRun, "lastRun");
        Objects.requireNonNull(lastJob, "lastJob");
    }

    /** The id of the job the occurrence of schedule {@code name} due at {@code time} enqueues. */
    public static OperationId occurrenceId(String name, Instant time) {
        return OperationId.of(name + "@" + time);
    }

    /**
     * The id of the job a trigger of schedule {@code name} at {@code time} enqueues ({@link
     * JobQueueOperator#triggerSchedule}): {@code <name>@<time>!}, never an occurrence's.
     */
    public static OperationId triggeredId(String name, Instant time) {
        return OperationId.of(name + "@" + time + "!");
    }
}
