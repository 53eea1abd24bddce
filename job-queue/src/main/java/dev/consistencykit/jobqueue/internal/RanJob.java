package dev.consistencykit.jobqueue.internal;

import static dev.consistencykit.jobqueue.internal.JobSchema.LAST_ERROR;

import java.util.Optional;

import org.bson.Document;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.jobqueue.JobState;

/**
 * Where running a job left it, with the error text of a failed or dead job ({@code null} otherwise).
 *
 * @param id        the job's id
 * @param state     its state after the run
 * @param lostLease whether another worker took it over before the run ended
 * @param error     the error text of a failed or dead job
 */
public record RanJob(Object id, JobState state, boolean lostLease, String error) {

    /** What the run came to, as a result: done committed, dead aborted, failed (to be retried) in flight. */
    public OperationResult result() {
        return toResult(null);
    }

    /** The common result; a failed or dead job's carries its error text (from {@code job} if the run had none). */
    OperationResult toResult(Document job) {
        OperationId operation = new OperationId(id);
        String text = error != null ? error : job == null ? null : job.getString(LAST_ERROR);
        return switch (state) {
            case DONE -> OperationResult.committed(operation, JobState.DONE.stored());
            case DEAD -> OperationResult.aborted(operation, JobState.DEAD.stored(), text == null ? "dead" : text);
            case FAILED -> new OperationResult(operation, OperationResult.Outcome.IN_FLIGHT, JobState.FAILED.stored(),
                    Optional.ofNullable(text));
            default -> OperationResult.inFlight(operation, state.stored());
        };
    }
}
