package dev.consistencykit.logreconciliation;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;

import dev.consistencykit.testkit.ChaosRunner;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

@ExtendWith(MongoTestExtension.class)
class ChaosTest {

    static final int SEEDS = 200;
    private static final Map<String, Long> OPENING = Books.accounts(4, 500);

    /** Transfers and three-way splits under the overdraft rule, appended or applied, with committers racing. */
    static ChaosRunner runner(MongoClient client) {
        return ChaosRunner.builder(client)
                .name("ledger")
                .workers(6)
                .operationsPerWorker(4)
                .faultRate(0.08)
                .maxPause(Duration.ofMillis(15))
                .recoverers(2)
                .workload(BooksWorkload.transfers(OPENING).overdraftFloor(0))
                .build();
    }

    @Test
    void shouldKeepEveryInvariantAcross200Seeds(MongoClient client) {
        ChaosRunner.Summary summary = runner(client).runSeeds(1, SEEDS);

        assertThat(summary.seeds()).isEqualTo(SEEDS);
        assertThat(summary.crashes()).isPositive();
        assertThat(summary.failures()).as(summary.toString()).isEmpty();
    }
}
