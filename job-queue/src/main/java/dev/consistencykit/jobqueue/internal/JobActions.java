package dev.consistencykit.jobqueue.internal;

import static dev.consistencykit.jobqueue.internal.JobSchema.COMPLETED;
import static dev.consistencykit.jobqueue.internal.JobSchema.EFFECTS;
import static dev.consistencykit.jobqueue.internal.JobSchema.MAX_ATTEMPTS;
import static dev.consistencykit.jobqueue.internal.JobSchema.PAYLOAD;
import static dev.consistencykit.jobqueue.internal.JobSchema.PRIORITY;
import static dev.consistencykit.jobqueue.internal.JobSchema.STATE;
import static dev.consistencykit.jobqueue.internal.JobSchema.TYPE;
import static dev.consistencykit.jobqueue.internal.JobSchema.UNSETTLED;

import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import org.bson.Document;
import org.bson.conversions.Bson;
import org.bson.types.ObjectId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.spi.GuardedResult;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.Transition;
import dev.consistencykit.core.spi.UpdateOutcome;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.jobqueue.JobState;

/**
 * An operator's actions on live jobs: cancel one that waits (it never runs), move when one runs, run a finished one
 * again as a new job linked to it. Each decides by a compare-and-set on the job's state, so a worker claiming the job
 * at the same moment wins or loses whole: a job runs once or never.
 */
public final class JobActions {

    private static final Logger LOG = LoggerFactory.getLogger(JobActions.class);
    /** The states a job may be canceled or moved in: no worker holds it. */
    static final List<String> WAITING = List.of(JobState.TODO.stored(), JobState.FAILED.stored(),
            JobState.AWAITING.stored());
    /** The states a job may run again from, as a new job. */
    static final List<String> FINISHED = List.of(JobState.DONE.stored(), JobState.DISCARDED.stored(),
            JobState.DEAD.stored());
    /** Between the id of the job a rerun runs again and the rerun's own part, in the rerun's id. */
    public static final String RERUN_OF = "/rerun/";

    private final JobQueueConfig config;
    private final JobStore store;
    private final JobDeadLetters deadLetters;
    private final JobRecording recording;

    JobActions(JobQueueConfig config, JobStore store, JobDeadLetters deadLetters, JobRecording recording) {
        this.config = config;
        this.store = store;
        this.deadLetters = deadLetters;
        this.recording = recording;
    }

    /**
     * Cancels job {@code id} while it waits (due later, due now, failed and due again, or awaiting its key's turn): it
     * moves to {@code discarded}, marked canceled, by a compare-and-set on the state it was read in; the marks of
     * effects an earlier attempt applied are settled, and its key's line moves on. A worker that claimed it first
     * keeps it: false. A lost reply's retry finds the call's own nonce on the job: true.
     */
    public boolean cancel(Object id) {
        Ids.operationId(config.name(), "id", id);
        String nonce = UUID.randomUUID().toString();
        for (int attempt = 0; attempt < WAITING.size() + 1; attempt++) {
            Document job = config.retryPolicy().execute(config.name(), id, "read job", () -> store.readPrimary(id));
            if (job == null) {
                return false;
            }
            if (nonce.equals(job.get(JobSchema.CANCELED))) {
                deadLetters.ended(id, job);
                return true;
            }
            if (!WAITING.contains(job.get(STATE))) {
                return false;
            }
            boolean effects = !job.getList(EFFECTS, Object.class, List.of()).isEmpty();
            Bson update = Updates.combine(Updates.currentDate(COMPLETED), Updates.set(JobSchema.CANCELED, nonce),
                    Updates.unset(JobSchema.CLAIM_AT),
                    effects ? Updates.set(UNSETTLED, true) : Updates.unset(UNSETTLED));
            GuardedResult r = store.transition(id, "cancel", Transition.of(STATE, job.getString(STATE),
                    JobState.DISCARDED.stored()).alsoUpdating(update));
            if (r.outcome() == UpdateOutcome.APPLIED || r.document().map(d -> nonce.equals(
                    d.get(JobSchema.CANCELED))).orElse(false)) {
                LOG.info("[{}] canceled job {} ({})", config.name(), Values.show(id), job.get(STATE));
                deadLetters.ended(id, job);
                return true;
            }
            // moved meanwhile: claimed (then it runs), or from one waiting state to another (read it again)
        }
        return false;
    }

    /**
     * Moves when job {@code id} runs to {@code at}, while it is due later or failed and due again: a job a worker holds,
     * a finished one or one awaiting its key's turn is left as it is (false).
     */
    public boolean reschedule(Object id, Instant at) {
        Ids.operationId(config.name(), "id", id);
        return store.moveRunAt(id, Date.from(at));
    }

    /**
     * Enqueues finished job {@code id} (done, discarded or dead) again as a new job: its type, payload, priority and
     * attempts (not its ordering or concurrency key: the line it ran in has moved on), under the id
     * {@code <id as printed>/rerun/<new ObjectId>}, so the new job names the one it reruns. The id is made once per
     * call, so a retry of the enqueue after a lost reply finds the same job: one new job per call.
     *
     * @return the new job's id; empty if {@code id} names no finished job
     */
    public Optional<OperationId> rerun(Object id) {
        Ids.operationId(config.name(), "id", id);
        Document job = config.retryPolicy().execute(config.name(), id, "read job", () -> store.readPrimary(id));
        if (job == null || !FINISHED.contains(job.get(STATE)) || !(job.get(TYPE) instanceof String type)) {
            return Optional.empty();
        }
        OperationId rerun = OperationId.of(new OperationId(id) + RERUN_OF + new ObjectId().toHexString());
        JobRequest request = JobRequest.of(type, job.get(PAYLOAD) == null ? new Document() : job.get(PAYLOAD))
                .withId(rerun);
        if (job.get(PRIORITY) instanceof Integer priority) {
            request = request.withPriority(priority);
        }
        if (job.get(MAX_ATTEMPTS) instanceof Integer attempts) {
            request = request.withMaxAttempts(attempts);
        }
        OperationId enqueued = recording.enqueue(recording.encode(request));
        LOG.info("[{}] job {} runs again as {}", config.name(), Values.show(id), Values.show(enqueued.value()));
        return Optional.of(enqueued);
    }
}
