package dev.consistencykit.twophase;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;

import dev.consistencykit.core.OperationId;
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
                .setup(db -> Bank.seed(db, ACCOUNTS))
                .operation(ctx -> {
                    int from = ctx.random().nextInt(10);
                    int to = (from + 1 + ctx.random().nextInt(9)) % 10;
                    long amount = 1L + ctx.random().nextInt(400);
                    TwoPhaseCommit tpc = CrashExplorationTest.instance(ctx.database(), variant,
                            StalePendingPolicy.ROLL_BACK);
                    tpc.transfer(Transfer.of(OperationId.of("w" + ctx.worker() + "-" + ctx.sequence()),
                            "a" + from, "a" + to, amount));
                })
                .recovery(db -> CrashExplorationTest.instance(db, variant, StalePendingPolicy.ROLL_BACK)
                        .recover(Duration.ZERO))
                .invariants(db -> Bank.invariants(db, ACCOUNTS, variant == TransferVariant.RESERVE_THEN_CREDIT))
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
