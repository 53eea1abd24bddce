package dev.consistencykit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;

import dev.consistencykit.testkit.junit5.MongoTestExtension;

@ExtendWith(MongoTestExtension.class)
class ChaosRunnerTest {

    private static ChaosRunner.Builder chaos(MongoClient client, boolean guardless) {
        return ChaosRunner.builder(client)
                .name(guardless ? "guardless" : "guarded")
                .workers(4)
                .operationsPerWorker(5)
                .faultRate(0.1)
                .workload(new TransfersWorkload(guardless));
    }

    @Test
    void shouldKeepInvariantsAcrossSeedsWhenStrategyIsGuarded(MongoClient client) {
        ChaosRunner.Summary summary = chaos(client, false).build().runSeeds(1, 20);

        assertThat(summary.seeds()).isEqualTo(20);
        assertThat(summary.operations()).isEqualTo(20 * 4 * 5);
        assertThat(summary.faults()).isPositive();
        assertThat(summary.crashes()).isPositive();
        assertThat(summary.failures()).as(summary.toString()).isEmpty();
    }

    @Test
    void shouldReportFailingSeedsWhenStrategyIsNotGuarded(MongoClient client) {
        ChaosRunner.Summary summary = chaos(client, true).faultRate(0.3).build().runSeeds(100, 10);

        assertThat(summary.failures()).isNotEmpty();
        assertThat(summary.toString()).contains("replay with seed");
    }

    @Test
    void shouldInjectSameFaultsWhenSameSeedIsReplayed(MongoClient client) {
        // One worker and no concurrent recoverers: the whole run is deterministic given the seed.
        ChaosRunner runner = chaos(client, false).workers(1).recoverers(0).operationsPerWorker(30).build();

        ChaosRunner.Result first = runner.run(7);
        ChaosRunner.Result second = runner.run(7);
        ChaosRunner.Result other = runner.run(8);

        assertThat(List.of(second.faults(), second.crashes())).isEqualTo(List.of(first.faults(), first.crashes()));
        assertThat(first.faults()).isPositive();
        assertThat(List.of(other.faults(), other.crashes())).isNotEqualTo(List.of(first.faults(), first.crashes()));
    }
}
