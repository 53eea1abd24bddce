package dev.consistencykit.jobqueue;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.spi.Calls;
import dev.consistencykit.core.spi.Checks;
import dev.consistencykit.jobqueue.internal.JobActions;
import dev.consistencykit.jobqueue.internal.JobAudit;
import dev.consistencykit.jobqueue.internal.JobDeadLetters;
import dev.consistencykit.jobqueue.internal.JobSchedules;

/**
 * What an operator calls on a job queue, where {@link JobQueue} is what an application calls (enqueue, the outbox,
 * schedules, workers): the dead letters, jobs found and the backlog, the jobs workers hold, live jobs canceled,
 * rescheduled or run again, and schedules paused, resumed or triggered. The two doors split as db-scheduler's
 * {@code SchedulerClient} and {@code Scheduler} do, so that a tool (the CLI, the Actuator endpoint, the dashboard)
 * holds only what it acts with. Get one from {@link JobQueue#operator()}; like the queue, it is thread-safe, and each
 * action decides by a compare-and-set on the server, so operators in many processes, the queue's workers and its
 * recovery may act on the same jobs at once: each effect happens once or not at all.
 *
 * <pre>{@code
 * JobQueueOperator operator = queue.operator();
 * List<InterruptedOperation> dead = operator.dead(0, 20);   // each with the error that killed it
 * long replayed = operator.replayDead(DeadJobs.all().ofType("mail"));
 * }</pre>
 */
public final class JobQueueOperator {

    private final Calls calls;
    private final JobAudit audit;
    private final JobDeadLetters deadLetters;
    private final JobActions actions;
    private final JobSchedules schedules;

    JobQueueOperator(Calls calls, JobAudit audit, JobDeadLetters deadLetters, JobActions actions,
                     JobSchedules schedules) {
        this.calls = calls;
        this.audit = audit;
        this.deadLetters = deadLetters;
        this.actions = actions;
        this.schedules = schedules;
    }

    /**
     * Pauses recurring job {@code name}: no occurrence fires after this returns, in any process, until
     * {@link #resumeSchedule}; one already fired runs. Registering its definition again keeps it paused.
     *
     * @return whether there was such a schedule
     */
    public boolean pauseSchedule(String name) {
        return calls.operation("pause schedule", name, () -> schedules.pause(name));
    }

    /**
     * Resumes recurring job {@code name}: a cron schedule runs next at its first occurrence after now (those that fell
     * while it was paused are skipped), a fixed delay at once.
     *
     * @return whether there was such a schedule
     */
    public boolean resumeSchedule(String name) {
        return calls.operation("resume schedule", name, () -> schedules.resume(name));
    }

    /**
     * Runs recurring job {@code name} once now, beside its occurrences (paused or not): enqueues one job like theirs,
     * id {@link RecurringJob#triggeredId}, exactly once for this call however its requests are retried.
     *
     * @return the job's id; empty if there is no such schedule
     */
    public Optional<OperationId> triggerSchedule(String name) {
        return calls.operation("trigger schedule", name, () -> schedules.trigger(name));
    }

    /** Recurring job {@code name}, with its next and last runs, if registered. */
    public Optional<RecurringJob> recurringJob(String name) {
        return calls.idempotent("read schedule", () -> schedules.get(name));
    }

    /**
     * The recurring jobs by name, after {@code skip}, at most {@code limit}.
     *
     * @throws IllegalArgumentException if {@code skip} is negative or {@code limit} below 1
     */
    public List<RecurringJob> recurringJobs(int skip, int limit) {
        Checks.atLeast("skip", skip, 0);
        Checks.atLeast("limit", limit, 1);
        return calls.idempotent("list schedules", () -> schedules.list(skip, limit));
    }


    /**
     * Dead jobs, each with the error that killed it, in the order of the {@code due} index, skipping {@code skip}:
     * what an operator pages through before {@link #replayDead}. Reads at most {@code skip + limit} index entries.
     *
     * @throws IllegalArgumentException if {@code skip} is negative or {@code limit} below 1
     */
    public List<InterruptedOperation> dead(int skip, int limit) {
        Checks.atLeast("skip", skip, 0);
        Checks.atLeast("limit", limit, 1);
        return calls.idempotent("list dead jobs", () -> audit.dead(skip, limit));
    }

    /**
     * The jobs workers hold now, longest held first (at most {@code limit}, through the index of running jobs by claim
     * time): who runs what and whether its lease still moves. A workers view groups them by {@link RunningJob#owner}.
     *
     * @throws IllegalArgumentException if {@code limit} is below 1
     */
    public List<RunningJob> running(int limit) {
        Checks.atLeast("limit", limit, 1);
        return calls.idempotent("list running jobs", () -> audit.running(limit));
    }

    /** The most jobs one {@link #jobs search} returns. */
    public static final int MAX_FOUND = 1_000;

    /**
     * The jobs {@code which} selects whatever their state, newest enqueued first, at most {@code limit}: what an
     * operator looks for before opening one ({@code describe}) or acting on it. Each search is served by an index
     * ({@link JobSearch}); where the server sorts through the index too (MongoDB), it reads about as many entries as it
     * returns, plus those its other conditions pass over (docs/watching-jobs.md: the real engine sorts the matches).
     *
     * @throws IllegalArgumentException if {@code limit} is not in 1…{@link #MAX_FOUND}
     */
    public List<FoundJob> jobs(JobSearch which, int limit) {
        Objects.requireNonNull(which, "which");
        Checks.atLeast("limit", limit, 1);
        if (limit > MAX_FOUND) {
            throw new IllegalArgumentException("limit: at most " + MAX_FOUND + ", not " + limit);
        }
        return calls.idempotent("search jobs", () -> audit.search(which, limit));
    }

    /** The most jobs {@link #backlog()} reads per aggregation: its counts are "at least" beyond. */
    public static final int BACKLOG_CAP = 10_000;

    /**
     * Jobs per type by where they stand, waiting (due now), scheduled (due later), awaiting their key's turn, running
     * and dead, with the age of the oldest waiting one: the queue's backlog, as an operator watches it and the gauges
     * show it. Five aggregations over indexes led by the state, each reading at most {@link #BACKLOG_CAP} jobs.
     */
    public List<JobBacklog> backlog() {
        return calls.idempotent("backlog", () -> audit.backlog(BACKLOG_CAP));
    }


    /** Counts per state and job type. */
    public Map<String, Map<String, Long>> countsByType() {
        return calls.idempotent("count by type", audit::countsByType);
    }


    /**
     * Puts dead job {@code id} back in the queue, attempts from zero.
     *
     * @return whether it was dead and is queued again (false if it was not dead: unknown, running, discarded)
     */
    public boolean replayDead(OperationId id) {
        Objects.requireNonNull(id, "id");
        return calls.operation("replay dead job", id.value(), () -> deadLetters.replay(id.value()));
    }

    /**
     * Cancels job {@code id} while it waits (due later, due now, failed and due again, or awaiting its ordering or
     * concurrency key's turn): it never runs; it is kept in state {@code discarded}, marked canceled, and pruned past
     * the retention; marks an earlier attempt left on documents are settled and its key's line moves on. It decides by
     * a compare-and-set on the job's state, so a worker claiming the job at the same moment wins or loses whole.
     *
     * @return whether this call canceled it (false: unknown, running, or finished)
     */
    public boolean cancel(OperationId id) {
        Objects.requireNonNull(id, "id");
        return calls.operation("cancel job", id.value(), () -> actions.cancel(id.value()));
    }

    /**
     * Moves when job {@code id} runs to {@code at}, while it is due later or failed and due again (a past time: as soon
     * as a worker is free). A job a worker holds, a finished one or one awaiting its key's turn is left as it is.
     *
     * @return whether the job was waiting and now runs at {@code at}
     */
    public boolean reschedule(OperationId id, Instant at) {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(at, "at");
        return calls.operation("reschedule job", id.value(), () -> actions.reschedule(id.value(), at));
    }

    /**
     * Runs finished job {@code id} (done, discarded or dead) again as a new job: its type, payload, priority and
     * attempts (not its ordering or concurrency key), under an id that names it ({@code <id>/rerun/<ObjectId>}).
     * One new job per call, however its write is retried.
     *
     * @return the new job's id; empty if {@code id} names no finished job
     */
    public Optional<OperationId> rerun(OperationId id) {
        Objects.requireNonNull(id, "id");
        return calls.operation("rerun job", id.value(), () -> actions.rerun(id.value()));
    }

    /**
     * Puts every dead job {@code which} selects back in the queue, attempts from zero, in one write guarded by each
     * job's state: a job another operator discarded or replayed first is left as it is.
     *
     * @return the jobs queued again
     */
    public long replayDead(DeadJobs which) {
        Objects.requireNonNull(which, "which");
        return calls.idempotent("replay " + which, () -> deadLetters.replay(which));
    }

    /**
     * Discards the dead jobs {@code which} selects: each is kept with its error, in state {@code discarded}, and never
     * runs again (nor can it be replayed); the marks of the effects it applied are removed from their documents (the
     * effects stay). Each job moves by a compare-and-set on its state, so a replay racing the discard wins or loses
     * whole. Discarded jobs are pruned past the retention like done ones.
     *
     * @return the jobs this call discarded
     */
    public long discardDead(DeadJobs which) {
        Objects.requireNonNull(which, "which");
        return calls.idempotent("discard " + which, () -> deadLetters.discard(which));
    }

    /**
     * Deletes the dead and discarded jobs {@code which} selects (dead ones are discarded first). A job whose enqueuing
     * process still holds it (it may retry its write) is reduced to its id and state instead, and pruned once
     * released, so a late retry never enqueues it again.
     *
     * @return the jobs deleted
     */
    public long deleteDead(DeadJobs which) {
        Objects.requireNonNull(which, "which");
        return calls.idempotent("delete " + which, () -> deadLetters.delete(which));
    }

    /**
     * The dead jobs {@code which} selects, as {@link #dead(int, int)} lists them.
     *
     * @throws IllegalArgumentException if {@code skip} is negative or {@code limit} below 1
     */
    public List<InterruptedOperation> dead(DeadJobs which, int skip, int limit) {
        Objects.requireNonNull(which, "which");
        Checks.atLeast("skip", skip, 0);
        Checks.atLeast("limit", limit, 1);
        return calls.idempotent("list " + which, () -> audit.dead(which, skip, limit));
    }
}
