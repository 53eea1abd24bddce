package dev.consistencykit.twophase;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;

import dev.consistencykit.testkit.ChaosRunner;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** Seeded chaos: 8 workers, 10 accounts, random faults in every mode, two recoverers running all along. */
@ExtendWith(MongoTestExtension.class)
class ChaosTest {

    static final int SEEDS = 200;
    private static final Map<String, Long> ACCOUNTS = Bank.accounts(10, 1_000);

    static ChaosRunner runner(MongoClient client, TransferVariant variant) {
        return ChaosRunner.builder(client)
                .name("2pc-" + variant)
                .workers(8)
                .operationsPerWorker(3)
                .faultRate(0.08)
                .maxPause(Duration.ofMillis(15))
                .recoverers(2)
                .workload(TransferWorkload.transfers(ACCOUNTS, variant, StalePendingPolicy.ROLL_BACK))
                .build();
    }

    @Test
    void shouldKeepEveryInvariantAcross200SeedsWhenReserveThenCredit(MongoClient client) {
        ChaosRunner.Summary summary = runner(client, TransferVariant.RESERVE_THEN_CREDIT).runSeeds(1, SEEDS);

        assertThat(summary.seeds()).isEqualTo(SEEDS);
        assertThat(summary.crashes()).isPositive();
        assertThat(summary.failures()).as(summary.toString()).isEmpty();
    }

    @Test
    void shouldKeepEveryInvariantWhenApplyAtPrepare(MongoClient client) {
        ChaosRunner.Summary summary = runner(client, TransferVariant.APPLY_AT_PREPARE).runSeeds(10_001, 40);

        assertThat(summary.failures()).as(summary.toString()).isEmpty();
    }
}
