package dev.consistencykit.versioning;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;

import dev.consistencykit.testkit.ChaosRunner;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

@ExtendWith(MongoTestExtension.class)
class ChaosTest {

    static final int SEEDS = 200;

    /**
     * Writers on one root ({@link CatalogueWorkload#edits}: read-modify-write updates retried on conflict, blind
     * commits and staged change sets, each carrying the checksum of the state it makes); random crashes, transient
     * errors and pauses; two recoverers.
     */
    static ChaosRunner runner(MongoClient client) {
        return ChaosRunner.builder(client)
                .name("versions")
                .workers(6)
                .operationsPerWorker(4)
                .faultRate(0.08)
                .maxPause(Duration.ofMillis(15))
                .recoverers(2)
                .workload(CatalogueWorkload.edits(Catalogue.products(4)))
                .build();
    }

    @Test
    void shouldKeepEveryVersionWholeAcross200Seeds(MongoClient client) {
        ChaosRunner.Summary summary = runner(client).runSeeds(1, SEEDS);

        assertThat(summary.seeds()).isEqualTo(SEEDS);
        assertThat(summary.crashes()).isPositive();
        assertThat(summary.failures()).as(summary.toString()).isEmpty();
    }
}
