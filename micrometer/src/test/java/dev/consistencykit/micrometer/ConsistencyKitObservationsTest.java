package dev.consistencykit.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.spi.Calls;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;

/** The observations of calls, through the call boundary every pattern's public method crosses. */
class ConsistencyKitObservationsTest {

    /** Every observation stopped in the registry, with its keys. */
    private final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();
    private final ObservationRegistry registry = ObservationRegistry.create();

    ConsistencyKitObservationsTest() {
        registry.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }

            @Override
            public void onStop(Observation.Context context) {
                stopped.add(context);
            }
        });
    }

    private Calls calls() {
        return new Calls("payments", RetryPolicy.DEFAULT, Duration.ofSeconds(5), "two-phase",
                new ConsistencyKitObservations(registry));
    }

    private static Map<String, String> keys(Observation.Context context) {
        Map<String, String> keys = new TreeMap<>();
        for (KeyValue kv : context.getLowCardinalityKeyValues()) {
            keys.put(kv.getKey(), kv.getValue());
        }
        return keys;
    }

    @Test
    void shouldObserveEachOutermostCallWithItsTagsAndKeepItInScopeForTheCall() {
        Calls calls = calls();
        Observation[] inScope = new Observation[1];

        calls.operation("transfer", "t1", () -> {
            inScope[0] = registry.getCurrentObservation();
            // a call made inside another is part of it, not an observation of its own
            return calls.idempotent("read", () -> OperationResult.committed(OperationId.of("t1"), "done"));
        });

        assertThat(stopped).hasSize(1);
        assertThat(stopped.get(0).getName()).isEqualTo(ConsistencyKitObservations.NAME);
        assertThat(stopped.get(0).getContextualName()).isEqualTo("two-phase transfer");
        assertThat(keys(stopped.get(0))).isEqualTo(Map.of("pattern", "two-phase", "instance", "payments",
                "operation", "transfer", "outcome", "committed"));
        assertThat(inScope[0]).isNotNull();
        assertThat(inScope[0].getContext()).isSameAs(stopped.get(0));
        assertThat(registry.getCurrentObservation()).as("out of scope after the call").isNull();
    }

    @Test
    void shouldTagTheOutcomeOfEveryKindOfAnswer() {
        Calls calls = calls();

        calls.idempotent("count", () -> 3L);
        calls.operation("enqueue with a business write", "j1", () -> java.util.Optional.empty());
        calls.operation("apply", "j2", () -> OperationResult.aborted(OperationId.of("j2"), "dead", "boom"));
        IllegalStateException boom = new IllegalStateException("the application's handler failed");
        assertThatThrownBy(() -> calls.applicationCode("run job", "j3", () -> {
            throw boom;
        })).isSameAs(boom);

        assertThat(stopped).extracting(c -> keys(c).get("outcome")).containsExactly("success", "empty", "aborted",
                "error");
        assertThat(stopped.get(3).getError()).isSameAs(boom);
    }

    @Test
    void shouldNotFailTheCallWhenTheObserverFails() {
        Calls calls = new Calls("payments", RetryPolicy.DEFAULT, Duration.ofSeconds(5), "two-phase",
                (pattern, instance, operation) -> {
                    throw new IllegalStateException("tracing backend down");
                });

        assertThat(calls.idempotent("count", () -> 3L)).isEqualTo(3L);
    }
}
