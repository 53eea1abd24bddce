package dev.consistencykit.jobqueue.internal;

import java.time.Duration;

import org.bson.Document;

import dev.consistencykit.jobqueue.JobState;

/**
 * What a feature of the queue does when a job moves. A feature (an ordering key's line, a schedule, the counters and
 * the application's listener) is a part that implements the moments it cares about; {@link JobParts} hands the parts
 * to {@link JobHooks}, and the parts where jobs move (recording, the runner, recovery, the dead letters) call the
 * hooks, never a feature by name. db-scheduler adds behaviour to its executor the same way, as task policies
 * ({@code FailureHandler}, {@code DeadExecutionHandler}).
 *
 * <p>A hook runs in the thread that moved the job, after the write that moved it; it is not called again for a move
 * whose process died first, so a hook that must happen finishes in {@link #recover}, which every recovery pass calls.
 * A hook throws only what the move's caller must see (a line that refuses a job); anything else it leaves to
 * recovery.
 */
interface JobHook {

    /**
     * Job {@code jobId} was recorded (or found recorded by a retry of its enqueue) from {@code fields}, the fields this
     * enqueue wrote, carrying line nonce {@code lineNonce}.
     */
    default void recorded(Object jobId, Document fields, Object lineNonce) {
    }

    /** A job stopped moving through the queue: done, dead or discarded (the job as its mover read it). */
    default void ended(EndedJob ended) {
    }

    /** Attempt {@code attempt} of job {@code jobId} failed; it runs again after a backoff. */
    default void failed(Object jobId, String type, int attempt, String error, Throwable thrown) {
    }

    /** Job {@code jobId} was taken back from a worker that lost its lease, for another attempt. */
    default void requeued(Object jobId, String type) {
    }

    /** The worker running job {@code jobId} lost its lease before it could record the outcome. */
    default void leaseLost(Object jobId, String type) {
    }

    /** A recovery pass: finishes what movers that died left (staleAfter: how long a quiet writer is given). */
    default void recover(Duration staleAfter) {
    }

    /**
     * A job that ended.
     *
     * @param id     the job's id
     * @param job    the job as its mover read it (its type, its key's line)
     * @param state  {@code DONE}, {@code DEAD} or {@code DISCARDED}
     * @param error  why it died, for a dead job
     * @param thrown what its handler threw, for a dead job whose handler threw
     */
    record EndedJob(Object id, Document job, JobState state, String error,
                    Throwable thrown) {
    }
}
