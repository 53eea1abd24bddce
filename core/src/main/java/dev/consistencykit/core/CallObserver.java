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

    /**
     * A call begins in this thread that sends work on to be done later, elsewhere (a job enqueued): the observer may
     * give it, through {@link #carried()}, what continues it there. By default, as any call.
     */
    default Observed startSending(String pattern, String instance, String operation) {
        return start(pattern, instance, operation);
    }

    /**
     * What the sending call observed in this thread hands on to the work it sends (W3C {@code traceparent} and the
     * like), stored with that work: names are field names (no {@code .}, no leading {@code $}), values text. Empty
     * by default, and outside a sending call.
     */
    default java.util.Map<String, String> carried() {
        return java.util.Map.of();
    }

    /**
     * A call begins in this thread that does work a sending call sent ({@link #startSending}), with what that call
     * carried: the observer may continue it (a job's run under its enqueue's trace). By default, as any call.
     */
    default Observed startReceiving(String pattern, String instance, String operation,
                                    java.util.Map<String, String> carried) {
        return start(pattern, instance, operation);
    }

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
