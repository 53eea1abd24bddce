package dev.consistencykit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.testkit.junit5.MongoTestExtension;

@ExtendWith(MongoTestExtension.class)
class CrashPointExplorerTest {

    private static CrashPointExplorer.Builder explorer(MongoClient client, boolean guardless) {
        return CrashPointExplorer.builder(client)
                .name(guardless ? "guardless" : "guarded")
                .workload(new TransfersWorkload(guardless));
    }

    @Test
    void shouldRunEverySiteTimesEveryModeTimesRecovererCountWhenExploring(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = explorer(client, false).build().explore();

        // insert intent, apply to a, apply to b, mark done
        assertThat(report.writeSites()).isEqualTo(4);
        assertThat(report.sites()).extracting(WriteSite::method)
                .containsExactly("insertOne", "updateOne", "updateOne", "findOneAndUpdate");
        assertThat(report.scenarios()).isEqualTo(1 + 4 * FaultMode.values().length * 2);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldReportViolationsWhenApplyIsNotGuarded(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = explorer(client, true).build().explore();

        assertThat(report.passed()).isFalse();
        assertThat(report.violations()).anySatisfy(v -> {
            assertThat(v.scenario().mode()).isIn(FaultMode.CRASH_AFTER, FaultMode.TRANSIENT_AFTER);
            assertThat(v.problems()).anyMatch(p -> p.contains("applied twice") || p.contains("balance"));
        });
        assertThat(report.toString()).contains("violations");
    }

    @Test
    void shouldReplayOneScenarioWhenAskedTo(MongoClient client) {
        CrashPointExplorer guardless = explorer(client, true).build();

        List<String> problems = guardless.run(CrashPointExplorer.Scenario.of(2, FaultMode.CRASH_AFTER, 1));
        List<String> clean = explorer(client, false).build()
                .run(CrashPointExplorer.Scenario.of(2, FaultMode.CRASH_AFTER, 1));

        assertThat(problems).isNotEmpty();
        assertThat(clean).isEmpty();
    }

    @Test
    void shouldCrashRecoveryAtEachOfItsWriteSitesWhenAsked(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = explorer(client, false)
                .modes(Set.of(FaultMode.CRASH_BEFORE, FaultMode.CRASH_AFTER))
                .recoverers(1)
                .recoveryFaults(true)
                .build().explore();

        assertThat(report.scenarios()).isGreaterThan(1 + 4 * 2);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldReportUnexpectedFailureWhenOperationThrowsOtherException(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client)
                .name("broken")
                .workload(new Workload() {
                    @Override
                    public void seed(MongoDatabase database) {
                    }

                    @Override
                    public void operate(MongoDatabase database, Random random) {
                        database.getCollection("x").insertOne(new org.bson.Document("_id", 1));
                        throw new IllegalStateException("boom");
                    }

                    @Override
                    public void recover(MongoDatabase database) {
                    }

                    @Override
                    public List<String> invariants(MongoDatabase database) {
                        return List.of();
                    }
                })
                .modes(Set.of(FaultMode.TRANSIENT_BEFORE))
                .recoverers(1)
                .build().explore();

        assertThat(report.violations()).anySatisfy(v -> assertThat(String.join(" ", v.problems()))
                .contains("fault-free run failed").contains("IllegalStateException"));
        // a raw transient error escaping the operation is reported too: it may have applied, so it is no failure
        assertThat(report.violations()).anySatisfy(v -> assertThat(String.join(" ", v.problems()))
                .contains("failed unexpectedly").contains("MongoSocketWriteException"));
    }
}
