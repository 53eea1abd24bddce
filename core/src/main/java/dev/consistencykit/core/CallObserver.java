package dev.consistencykit.core;

/**
 * Sees each public call of an instance begin and end, in the calling thread: what tracing hangs on
 * ({@code consistency-kit-micrometer}'s {@code ConsistencyKitObservations} makes each one a Micrometer
 * {@code Observation}, under which the driver's own command spans nest). Only the outermost call of a thread is
 * observed: a relay inside an outbox write is part of that write.
 *
 * <p>An observer must be thread-safe and quick; an exception it throws is logged and ignored, never the call's.
 */
public interface CallObserver {

    /** Observes nothing. */
    CallObserver NONE = (pattern, instance, operation) -> Observed.NONE;

    /**
     * A call begins in this thread.
     *
     * @param pattern   the pattern, as its default instance name spells it ({@code two-phase}, {@code job-queue},
     *                  {@code sync-flag}, {@code log-reconciliation}, {@code versioning}): low cardinality
     * @param instance  the instance's name: low cardinality
     * @param operation what the call does ({@code transfer}, {@code enqueue}, {@code run job}…): low cardinality,
     *                  never an id
     * @return what ends it
     */
    Observed start(String pattern, String instance, String operation);

    /** One call being observed. */
    interface Observed {

        /** Ends nothing. */
        Observed NONE = (outcome, error) -> { };

        /**
         * The call ended, in the thread it began in.
         *
         * @param outcome {@code success}; for a call answering an operation result, its outcome ({@code committed},
         *                {@code aborted}, {@code in_flight}); {@code empty} for an empty answer; {@code error} when
         *                it threw
         * @param error   what it threw (a typed exception of this kit, or the application's), or {@code null}
         */
        void end(String outcome, RuntimeException error);
    }
}
