package dev.consistencykit.micrometer;

import java.util.Objects;

import dev.consistencykit.core.CallObserver;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

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
        Observation observation = Observation.createNotStarted(NAME, registry)
                .contextualName(pattern + " " + operation)
                .lowCardinalityKeyValue(KeyValue.of("pattern", pattern))
                .lowCardinalityKeyValue(KeyValue.of("instance", instance))
                .lowCardinalityKeyValue(KeyValue.of("operation", operation))
                .start();
        Observation.Scope scope = observation.openScope();
        return (outcome, error) -> {
            observation.lowCardinalityKeyValue(KeyValue.of("outcome", outcome));
            if (error != null) {
                observation.error(error);
            }
            scope.close();
            observation.stop();
        };
    }
}
