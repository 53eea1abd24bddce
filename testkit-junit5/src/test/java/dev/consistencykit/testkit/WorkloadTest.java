package dev.consistencykit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.fixture.IdempotentTransfers;
import dev.consistencykit.testkit.fixture.IdempotentTransfers.Transfer;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** One {@link Workload}, written once, run by the crash explorer, the interleaving explorer and the chaos runner. */
@ExtendWith(MongoTestExtension.class)
class WorkloadTest {

    /** Transfers between two accounts through the fixture strategy; {@code guardless} applies without its marker. */
    private record Transfers(boolean guardless) implements Workload {

        @Override
        public void seed(MongoDatabase database) {
            IdempotentTransfersCompatibilityTest.seedAccounts(database);
        }

        @Override
        public void operate(MongoDatabase database, Random random) {
            boolean aToB = random.nextBoolean();
            new IdempotentTransfers(database, guardless).apply(new Transfer(OperationId.of("t" + random.nextLong()),
                    aToB ? "a" : "b", aToB ? "b" : "a", 1 + random.nextInt(10)));
        }

        @Override
        public void recover(MongoDatabase database) {
            new IdempotentTransfers(database, guardless).recover(Duration.ZERO);
        }

        @Override
        public List<String> invariants(MongoDatabase database) {
            return IdempotentTransfers.invariants(database, 200, IdempotentTransfersCompatibilityTest.INITIAL);
        }
    }

    @Test
    void shouldDriveEveryRunnerFromOneWorkload(MongoTarget target, MongoClient client) {
        Workload transfers = new Transfers(false);

        CrashPointExplorer.ExplorationReport crashes = CrashPointExplorer.builder(client).name("workload")
                .workload(transfers).build().explore();
        InterleavingExplorer.Report interleavings = InterleavingExplorer.builder(target).name("workload")
                .workload(transfers)
                .actor("recoverer", db -> {
                    transfers.recover(db);
                    return List.of();
                }).build().explore();
        ChaosRunner.Summary chaos = ChaosRunner.builder(client).name("workload").workers(2).operationsPerWorker(5)
                .faultRate(0.1).workload(transfers).build().runSeeds(1, 3);

        assertThat(crashes.writeSites()).isEqualTo(4);
        assertThat(crashes.violations()).as(crashes.toString()).isEmpty();
        assertThat(interleavings.schedules()).isPositive();
        assertThat(interleavings.violations()).as(interleavings.toString()).isEmpty();
        assertThat(chaos.failures()).as(chaos.toString()).isEmpty();
    }

    @Test
    void shouldLetTheCrashExplorerFailAGuardlessWorkload(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client).name("guardless")
                .workload(new Transfers(true)).build().explore();

        assertThat(report.violations()).isNotEmpty();
    }
}
