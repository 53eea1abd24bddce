package dev.consistencykit.jobqueue;

import dev.consistencykit.core.OperationId;

/** Hooks called as jobs progress. Every method has a no-op default; a listener's exception is logged and ignored. */
public interface JobQueueListener {

    /** A job's handler succeeded and the job was marked done. */
    default void onDone(OperationId id, String type) {
    }

    /**
     * An attempt failed; the job will be retried.
     *
     * @param id      the job
     * @param type    its type
     * @param attempt the attempt that failed, from 1
     * @param error   the error text the job keeps ({@code lastError}, its history)
     * @param thrown  what the handler threw (or the {@link Error} its worker thread died of), with its stack
     */
    default void onFailed(OperationId id, String type, int attempt, String error, Throwable thrown) {
    }

    /**
     * A job went dead: its last attempt failed, or it can never run.
     *
     * @param id     the job
     * @param type   its type
     * @param error  the error text the job keeps
     * @param thrown what its last attempt's handler threw, with its stack; {@code null} when it died without one
     *               throwing (no handler is registered for its type, or its worker lost the lease on the last attempt)
     */
    default void onDead(OperationId id, String type, String error, Throwable thrown) {
    }

    /** The sweeper requeued a job whose worker's lease expired. */
    default void onRequeued(OperationId id, String type) {
    }

    /** A worker's completion was refused because another worker took the job over. */
    default void onLeaseLost(OperationId id, String type) {
    }

    /**
     * A worker met an exception (in a claim, a heartbeat, a completion, or a server call) and goes on after a
     * back-off.
     *
     * @param worker the worker thread's name
     * @param error  what it met
     */
    default void onWorkerError(String worker, Exception error) {
    }

    /**
     * A worker thread died of an exception the library does not catch (an {@link Error} from a handler); its job was
     * given back and a new thread took its place.
     *
     * @param worker the dead thread's name
     * @param error  what killed it
     */
    default void onWorkerDied(String worker, Throwable error) {
    }
}
