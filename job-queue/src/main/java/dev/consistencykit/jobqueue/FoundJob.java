package dev.consistencykit.jobqueue;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * One job a {@link JobQueueOperator#jobs search} found, as it stands: enough to pick it out of a list and open it
 * ({@code describe(id)}), or act on it.
 *
 * @param id         its id, as stored
 * @param type       its type
 * @param state      its state now
 * @param enqueuedAt when it was enqueued (the server's time), if the job records it
 * @param runAt      when it is or was due, if the job records it
 * @param attempts   attempts started so far
 * @param lastError  the error of its last failed attempt, if any
 */
public record FoundJob(Object id, String type, JobState state, Optional<Instant> enqueuedAt, Optional<Instant> runAt,
                       int attempts, Optional<String> lastError) {

    /** Validates the components. */
    public FoundJob {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(enqueuedAt, "enqueuedAt");
        Objects.requireNonNull(runAt, "runAt");
        Objects.requireNonNull(lastError, "lastError");
    }
}
