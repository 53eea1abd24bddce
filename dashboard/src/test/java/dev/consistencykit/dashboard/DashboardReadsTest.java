package dev.consistencykit.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.testkit.IndexCoverage;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.ReadBounds;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * What an open page costs the server: every read behind a poll (the overview, a page of operations, a page of dead
 * jobs, an operation opened) is served by a declared index and bounded, and nothing is written; so a page open on a
 * database of a million jobs reads no more than it does here. (The embedded server ignores secondary indexes: the
 * check is on the commands sent, as a real server would plan them.)
 */
@ExtendWith(MongoTestExtension.class)
class DashboardReadsTest {

    @Test
    void shouldReadThroughIndexesAndWithinBoundsOnEveryPoll(MongoTarget target, MongoDatabase db) {
        DashboardTest.seed(db);
        Dashboard dashboard = Dashboard.of(db, new DashboardSettings().staleAfter(Duration.ZERO));
        dashboard.handle(new DashboardRequest("GET", "/api/overview", Map.of(), null));   // the registry: read once

        try (IndexCoverage coverage = IndexCoverage.attach(target, db.getName());
             ReadBounds bounds = ReadBounds.attach(target, db.getName())) {
            for (String path : new String[] {"/api/overview", "/api/instances/two-phase/two-phase/operations",
                    "/api/instances/job-queue/job-queue/operations", "/api/instances/job-queue/job-queue/dead",
                    "/api/instances/two-phase/two-phase/operations/%22t-6%22",
                    "/api/instances/job-queue/job-queue/operations/%22held%22"}) {
                DashboardResponse r = dashboard.handle(new DashboardRequest("GET", path, Map.of("offset", "20"),
                        null));
                assertThat(r.status()).as(path + ": " + r.text()).isEqualTo(200);
            }
            assertThat(bounds.captured()).isGreaterThan(5);
            assertThat(bounds.unbounded(Set.of())).isEmpty();
            assertThat(coverage.uncovered(db)).isEmpty();
        }
    }
}
