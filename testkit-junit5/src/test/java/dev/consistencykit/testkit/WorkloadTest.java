package dev.consistencykit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;

import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** One {@link Workload}, written once, run by the crash explorer, the interleaving explorer and the chaos runner. */
@ExtendWith(MongoTestExtension.class)
class WorkloadTest {

    @Test
    void shouldDriveEveryRunnerFromOneWorkload(MongoTarget target, MongoClient client) {
        Workload transfers = new TransfersWorkload(false);

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
    void shouldTakeATypedFailureAsAnAnswerUnlessTheTableSaysTheOperationAlwaysCompletes(MongoTarget target) {
        Workload transfers = new TransfersWorkload(false);
        InterleavingExplorer.Builder table = InterleavingExplorer.builder(target).name("refusing")
                .workload(transfers)
                .actor("refuser", db -> {
                    throw new dev.consistencykit.core.ConsistencyException("refuser", null, "refused");
                });

        InterleavingExplorer.Report answered = table.build().explore();
        InterleavingExplorer.Report found = table.answers(e -> false).build().explore();

        assertThat(answered.violations()).isEmpty();
        assertThat(found.violations()).hasSize(found.schedules()).allMatch(v -> v.contains("refused"));
    }

    @Test
    void shouldLetTheCrashExplorerFailAGuardlessWorkload(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client).name("guardless")
                .workload(new TransfersWorkload(true)).build().explore();

        assertThat(report.violations()).isNotEmpty();
    }
}
