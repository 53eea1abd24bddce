package dev.consistencykit.micrometer;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

import dev.consistencykit.core.CallObserver;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.ReceiverContext;
import io.micrometer.observation.transport.SenderContext;

/**
 * A Micrometer {@link Observation} per public call of an instance: named {@value #NAME}, contextual name
 * {@code "<pattern> <operation>"} ({@code two-phase transfer}, {@code job-queue run job}), with the low-cardinality
 * keys {@code pattern}, {@code instance}, {@code operation} and, when it ends, {@code outcome} ({@code success},
 * {@code committed}, {@code aborted}, {@code in_flight}, {@code empty} or {@code error}, with the exception recorded as
 * the observation's error). The observation is in scope for the whole call, in the calling thread, so the spans of
 * the driver's own commands (and of anything else observed meanwhile) nest under it.
 *
 * <pre>{@code
 * TwoPhaseCommit payments = TwoPhaseCommit.builder(db).name("payments")
 *         .observer(new ConsistencyKitObservations(observationRegistry)).build();
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class ConsistencyKitObservations implements CallObserver {

    /** The name of every observation. */
    public static final String NAME = "consistencykit.operation";

    private final ObservationRegistry registry;

    /** Observations in {@code registry}. */
    public ConsistencyKitObservations(ObservationRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    @Override
    public Observed start(String pattern, String instance, String operation) {
        return observe(Observation.createNotStarted(NAME, registry), pattern, instance, operation, null);
    }

    /**
     * A call that sends work on (a job enqueued): its observation's context is a {@link SenderContext} whose carrier
     * a tracing handler fills ({@code PropagatingSenderTracingObservationHandler}: W3C {@code traceparent} with
     * Micrometer Tracing's default propagation), and {@link #carried()} hands that carrier to the work.
     */
    @Override
    public Observed startSending(String pattern, String instance, String operation) {
        Map<String, String> carrier = new LinkedHashMap<>();
        SenderContext<Map<String, String>> context = new SenderContext<>((c, key, value) -> {
            if (c != null) {
                c.put(key, value);
            }
        });
        context.setCarrier(carrier);
        return observe(Observation.createNotStarted(NAME, () -> context, registry), pattern, instance, operation,
                carrier);
    }

    /** What the sending call observed in this thread carries: its carrier, as the tracing handler filled it. */
    @Override
    public Map<String, String> carried() {
        Map<String, String> carrier = SENDING.get();
        return carrier == null ? Map.of() : Map.copyOf(carrier);
    }

    /**
     * The work a sending call sent (a job's run): its observation's context is a {@link ReceiverContext} reading
     * {@code carried}, so that a tracing handler ({@code PropagatingReceiverTracingObservationHandler}) makes its span
     * a child of the sending call's: one trace from the request that enqueued a job to its run, however late.
     */
    @Override
    public Observed startReceiving(String pattern, String instance, String operation, Map<String, String> carried) {
        ReceiverContext<Map<String, String>> context = new ReceiverContext<>((c, key) -> c == null ? null
                : c.get(key));
        context.setCarrier(Map.copyOf(carried));
        return observe(Observation.createNotStarted(NAME, () -> context, registry), pattern, instance, operation,
                null);
    }

    /** The sending calls' carriers, by thread: only the outermost call of a thread is observed. */
    private static final ThreadLocal<Map<String, String>> SENDING = new ThreadLocal<>();

    private static Observed observe(Observation created, String pattern, String instance, String operation,
                                    Map<String, String> carrier) {
        Observation observation = created
                .contextualName(pattern + " " + operation)
                .lowCardinalityKeyValue(KeyValue.of("pattern", pattern))
                .lowCardinalityKeyValue(KeyValue.of("instance", instance))
                .lowCardinalityKeyValue(KeyValue.of("operation", operation))
                .start();
        Observation.Scope scope = observation.openScope();
        if (carrier != null) {
            SENDING.set(carrier);
        }
        return (outcome, error) -> {
            if (carrier != null) {
                SENDING.remove();
            }
            observation.lowCardinalityKeyValue(KeyValue.of("outcome", outcome));
            if (error != null) {
                observation.error(error);
            }
            scope.close();
            observation.stop();
        };
    }
}
