package dev.consistencykit.jobqueue;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.bson.Document;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.ChaosRunner;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

@ExtendWith(MongoTestExtension.class)
class ScaleAndChaosTest {

    static final int SEEDS = 200;

    /**
     * Thousands of jobs, each run once by 16 workers racing for them. The embedded server narrows a claim to the due
     * jobs through the claim-order index's leading key but then matches and compares every one of them (mongod walks
     * the index in claim order and stops at the first), so a claim costs time linear in the queue there and this
     * test quadratic: 10,000 jobs took 2.5 minutes of a 12-minute suite on 2 cores. 3,000 keep every worker busy and
     * contending for the whole run; throughput at size is what {@code consistency-kit bench job-queue} measures.
     */
    // heavy: on a real engine only when asked (docs/servers.md): thousands of jobs: volume; the 200 chaos seeds beside
    // it run on every server
    @Tag("heavy")
    @Test
    void shouldRunThousandsOfJobsOnceEachWith16Workers(MongoDatabase db) {
        int counters = 100;
        int jobs = 3_000;
        Friends.seedCounters(db, counters);
        JobQueue queue = Friends.queue(db).build();
        queue.ensureIndexes();
        for (int i = 0; i < jobs; i++) {
            queue.enqueue(JobRequest.of("count", new Document("counter", "c" + (i % counters)))
                    .withId(OperationId.of(i)));
        }

        try (JobWorkers workers = queue.startWorkers(16)) {
            long deadline = System.nanoTime() + Duration.ofMinutes(8).toNanos();
            while (queue.status().inFlight() > 0 && System.nanoTime() < deadline) {
                sleep(1_000);
            }
            assertThat(workers.shutdown(Duration.ofSeconds(10))).isTrue();
        }

        assertThat(queue.status().count("done")).isEqualTo(jobs);
        assertThat(queue.status().count("processing")).isZero();
        long total = 0;
        for (Document c : db.getCollection(Friends.COUNTERS).find()) {
            assertThat(c.getLong("n")).as(c.getString("_id")).isEqualTo(jobs / counters);
            total += c.getLong("n");
        }
        assertThat(total).isEqualTo(jobs);
        assertThat(Friends.invariants(db)).isEmpty();
    }

    static ChaosRunner runner(MongoClient client) {
        return ChaosRunner.builder(client)
                .name("jobs")
                .workers(8).operationsPerWorker(4).faultRate(0.08).maxPause(Duration.ofMillis(15)).recoverers(2)
                .workload(FriendsWorkload.jobs().recoveredBy(db -> Friends.queue(db).maxAttempts(50).build()
                        .recover(Duration.ZERO)))
                .build();
    }

    @Test
    void shouldKeepEveryInvariantAcross200Seeds(MongoClient client) {
        ChaosRunner.Summary summary = runner(client).runSeeds(1, SEEDS);

        assertThat(summary.seeds()).isEqualTo(SEEDS);
        assertThat(summary.crashes()).isPositive();
        assertThat(summary.failures()).as(summary.toString()).isEmpty();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

}
