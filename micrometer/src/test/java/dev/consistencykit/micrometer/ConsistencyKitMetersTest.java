package dev.consistencykit.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.Guarantees;
import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.Maintenance;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.StrategyStatus;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/**
 * The binding alone, on a strategy whose counters the test sets (the five patterns with a real server are bound in
 * the conformance module's {@code MicrometerBindingTest}).
 */
class ConsistencyKitMetersTest {

    /** A strategy that only has counters: nothing here talks to a database. */
    private static final class Counting implements ConsistencyStrategy<String> {
        final Map<String, Long> counters = new LinkedHashMap<>(Map.of("recoveredForward", 0L));

        @Override
        public String name() {
            return "payments";
        }

        @Override
        public void ensureIndexes() {
        }

        @Override
        public OperationId submit(String change) {
            throw new UnsupportedOperationException();
        }

        @Override
        public OperationResult apply(String change) {
            throw new UnsupportedOperationException();
        }

        @Override
        public RecoveryReport recover(Duration staleAfter) {
            throw new UnsupportedOperationException();
        }

        @Override
        public RecoveryReport recoverOne(Object id, Duration staleAfter) {
            throw new UnsupportedOperationException();
        }

        @Override
        public java.util.Optional<dev.consistencykit.core.OperationView> describe(Object id) {
            return java.util.Optional.empty();
        }

        @Override
        public List<InterruptedOperation> interrupted(Duration staleAfter, int limit) {
            return List.of();
        }

        @Override
        public StrategyStatus status() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Guarantees guarantees() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Map<String, Long> counters() {
            return Map.copyOf(counters);
        }
    }

    /** A listener interface as the patterns declare them. */
    interface SampleListener {
        default void onCommitted(OperationId id) {
        }
    }

    @Test
    void shouldPublishEachCounterDottedAndTaggedAndReadItAtEachScrape() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Counting strategy = new Counting();
        ConsistencyKitMeters.bind(registry, strategy);

        strategy.counters.put("recoveredForward", 3L);

        assertThat(registry.get("consistencykit.recovered.forward").tag("instance", "payments")
                .tag("pattern", "Counting").functionCounter().count()).isEqualTo(3.0);
    }

    @Test
    void shouldCountEveryListenerEventByInstanceAndEvent() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SampleListener listener = ConsistencyKitMeters.listener(SampleListener.class, registry, "payments");

        listener.onCommitted(OperationId.of("t1"));
        listener.onCommitted(OperationId.of("t2"));

        assertThat(registry.get("consistencykit.events").tag("instance", "payments").tag("event", "onCommitted")
                .counter().count()).isEqualTo(2.0);
        assertThat(listener.toString()).contains("payments");
        assertThatThrownBy(() -> ConsistencyKitMeters.listener(String.class, registry, "x"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldShowEachMaintenanceStepsFailuresAndLag() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Maintenance maintenance = Maintenance.builder().step("broken", Duration.ofHours(1), () -> {
            throw new IllegalStateException("no");
        }).build();
        ConsistencyKitMeters.bind(registry, maintenance);

        maintenance.runOnce();

        assertThat(registry.get("consistencykit.maintenance.failures").tag("step", "broken").gauge().value())
                .isEqualTo(1.0);
        assertThat(registry.get("consistencykit.maintenance.lag").tag("step", "broken").gauge().value()).isZero();
    }
}
