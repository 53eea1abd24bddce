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

    /**
     * The first 40 seeds: the part CI also runs on the real engine, where a colliding append and a committer's update
     * of the entry it collided with wait on each other until PostgreSQL's deadlock check ends one, so a seed takes
     * from under a second to a minute there (docs/servers.md).
     */
    @Test
    void shouldKeepEveryInvariantAcrossTheFirst40Seeds(MongoClient client) {
        check(runner(client).runSeeds(1, 40), 40);
    }

    /** Seeds 41 to 200: every build on the embedded server, and {@code scripts/test-real-engine --all}. */
    @Test
    void shouldKeepEveryInvariantAcrossSeeds41To200(MongoClient client) {
        check(runner(client).runSeeds(41, SEEDS - 40), SEEDS - 40);
    }

    private static void check(ChaosRunner.Summary summary, int seeds) {
        assertThat(summary.seeds()).isEqualTo(seeds);
        assertThat(summary.crashes()).isPositive();
        assertThat(summary.failures()).as(summary.toString()).isEmpty();
    }
}
