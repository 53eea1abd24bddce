package dev.consistencykit.jobqueue.internal;

import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ServerClock;
import dev.consistencykit.jobqueue.JobHandler;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobQueueListener;

/**
 * The parts of one job queue, created and wired in one place; the entry type and its workers call each directly.
 *
 * <p>A job is one document: recorded once (its id, or its dedupe key, makes a repeat find it), claimed by a
 * compare-and-set that takes a lease and the next fencing token, run, and completed, failed or sent dead by a write
 * fenced by that token, so a worker that lost its lease can never record an outcome. A handler's changes to other
 * documents go through the apply-once lifecycle, reserved by the claim and applied under that reservation; the outbox
 * writes jobs into a business document in the same write as the business change, and a relay moves them to the queue.
 *
 * <p>A feature that acts as jobs move is a part implementing {@link JobHook} (recorded, ended, failed, requeued, lease
 * lost, a recovery pass), listed here once in the hooks the moving parts call: the ordering and concurrency keys'
 * {@link JobLines}, the counters and listener's {@link JobNotices}, and, for recovery's pass, the schedules. A new
 * feature is its part and one line here.
 *
 * @param store       the only owner of the collections: the job's writes by name, the indexes, the records held
 * @param recording   a job checked, encoded and recorded
 * @param outbox      jobs written with a business document, and their relay into the queue
 * @param runner      a job claimed, run by its handler and completed, failed or sent dead; the workers' calls
 * @param recovery    jobs taken back from quiet workers, held jobs of quiet relayers, due jobs run
 * @param deadLetters dead jobs replayed, discarded or deleted
 * @param actions     live jobs canceled, rescheduled or run again
 * @param schedules   recurring jobs: schedules defined, their occurrences fired through the outbox
 * @param notices     the queue's counters and the application's listener, told as jobs move
 * @param pruner      done and discarded jobs past retention removed
 * @param audit       the operator's reads: describe, interrupted, dead, status, backlog, counters
 */
public record JobParts(JobStore store, JobRecording recording, JobOutbox outbox, JobRunner runner,
                       JobRecovery recovery, JobDeadLetters deadLetters, JobActions actions, JobSchedules schedules,
                       JobNotices notices, JobPruner pruner, JobAudit audit) {

    /** The parts over {@code database} (already checked for an acknowledged write concern). */
    public static JobParts of(JobQueueConfig config, MongoDatabase database, ServerClock clock,
                              JobQueueListener listener, Supplier<String> ownerIds, Map<String, JobHandler> handlers) {
        JobStore store = new JobStore(config, database);
        JobCounters counters = new JobCounters();
        JobLines lines = new JobLines(config, store, clock);
        JobNotices notices = new JobNotices(config.name(), counters, listener);
        // the features told as jobs move: keys' lines first (a key's next job may run), then counters and listener
        JobHooks hooks = new JobHooks(List.of(lines, notices));
        JobRecording recording = new JobRecording(config, store, hooks, counters, clock, ownerIds);
        JobOutbox outbox = new JobOutbox(config, store, recording, counters, ownerIds);
        JobRunner runner = new JobRunner(config, store, recording, handlers, hooks, clock, ownerIds);
        JobSchedules schedules = new JobSchedules(config, store, recording, outbox, clock);
        JobDeadLetters deadLetters = new JobDeadLetters(config, store, runner, hooks, clock);
        return new JobParts(store, recording, outbox, runner,
                new JobRecovery(config, store, runner, outbox, hooks.with(schedules), clock, ownerIds),
                deadLetters, new JobActions(config, store, deadLetters, recording), schedules, notices,
                new JobPruner(config, store, counters, clock),
                new JobAudit(config, store, counters, clock));
    }
}
