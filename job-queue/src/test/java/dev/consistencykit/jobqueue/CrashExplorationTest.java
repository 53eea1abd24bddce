package dev.consistencykit.jobqueue;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** One job's life (enqueue, claim, a handler writing two documents, complete) crashed at every write. */
@ExtendWith(MongoTestExtension.class)
class CrashExplorationTest {

    static CrashPointExplorer.Builder lifeOfAJob(MongoClient client) {
        return CrashPointExplorer.builder(client)
                .name("job-life")
                .workload(FriendsWorkload.on("ann", "bob").operation((db, queue, random) -> queue.apply(
                        Friends.befriend("ann", "bob").withId(OperationId.of("job-1"))))
                        .recoveredBy(db -> Friends.queue(db).build().recover(Duration.ZERO)));
    }

    @Test
    void shouldApplyEveryEffectOnceWhenAJobCrashesAtAnyWrite(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = lifeOfAJob(client).recoveryFaults(true).build().explore();

        assertThat(report.sites()).extracting(s -> s.method() + " " + s.collection()).containsExactly(
                "updateOne jobs", "findOneAndUpdate jobs",
                "findOneAndUpdate users", "updateOne jobs", "updateOne users",
                "findOneAndUpdate users", "updateOne jobs", "updateOne users",
                "findOneAndUpdate jobs", "bulkWrite users", "updateOne jobs");
        assertThat(report.scenarios()).isGreaterThanOrEqualTo(1 + 11 * FaultMode.values().length * 2);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }
}
