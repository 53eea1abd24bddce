package dev.consistencykit.syncflag;

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

    /** Workers rename three users (and change their e-mail, which has no copies) while sweepers run. */
    static ChaosRunner runner(MongoClient client) {
        return ChaosRunner.builder(client)
                .name("sync-flag")
                .workers(6)
                .operationsPerWorker(4)
                .faultRate(0.08)
                .maxPause(Duration.ofMillis(15))
                .recoverers(2)
                .workload(RenameWorkload.renames(3, 2))
                .build();
    }

    @Test
    void shouldBringEveryCopyInStepAcross200Seeds(MongoClient client) {
        ChaosRunner.Summary summary = runner(client).runSeeds(1, SEEDS);

        assertThat(summary.seeds()).isEqualTo(SEEDS);
        assertThat(summary.crashes()).isPositive();
        assertThat(summary.failures()).as(summary.toString()).isEmpty();
    }
}
