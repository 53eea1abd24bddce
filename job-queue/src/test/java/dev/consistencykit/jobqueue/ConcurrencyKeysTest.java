package dev.consistencykit.jobqueue;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.bson.Document;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.InterleavingExplorer;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * Concurrency keys: never more jobs of a key running than its limit, across workers; a failed job keeps its place
 * while it waits for its retry, a dead one leaves it; crashes and paused processes never let one more run.
 */
@ExtendWith(MongoTestExtension.class)
class ConcurrencyKeysTest {

    static JobRequest limited(String log, int n) {
        return JobRequest.of("step", new Document("log", log).append("n", n)).withId(OperationId.of(log + "-" + n))
                .withConcurrencyKey(log, 1);
    }

    private static String state(MongoDatabase db, String id) {
        return db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("_id", id)).first().getString("state");
    }

    /** On a line of one document, and on one of 12 at most, kept in chunks of 3: the first two span two chunks. */
    @ParameterizedTest(name = "lines of {0}")
    @ValueSource(ints = {JobQueueConfig.DEFAULT_MAX_KEY_BACKLOG, 12})
    void shouldNeverRunMoreJobsOfAKeyThanItsLimitAcrossWorkers(int backlog, MongoDatabase db)
            throws InterruptedException {
        int jobs = 12;
        AtomicInteger running = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(jobs);
        CountDownLatch twoStarted = new CountDownLatch(2);
        JobQueue queue = JobQueue.builder(db).maxIdle(Duration.ofMillis(5)).maxKeyBacklog(backlog)
                .handler("busy", ctx -> {
                most.accumulateAndGet(running.incrementAndGet(), Math::max);
                twoStarted.countDown();
                try {
                    // the first job holds its place until a second runs beside it: the other two workers try for a third
                    // meanwhile, and the limit must refuse them
                    assertThat(twoStarted.await(60, TimeUnit.SECONDS)).isTrue();
                } finally {
                    running.decrementAndGet();
                    done.countDown();
                }
            }).build();
        queue.ensureIndexes();
        for (int i = 0; i < jobs; i++) {
            queue.enqueue(JobRequest.of("busy", null).withConcurrencyKey("printer", 2));
        }
        assertThat(queue.status().countsByState()).containsEntry("todo", 2L).containsEntry("awaiting", 10L);
        try (JobWorkers workers = queue.startWorkers(4)) {
            assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
            assertThat(most.get()).as("jobs of the key running at once").isBetween(1, 2);
            assertThat(workers.health().errors()).isZero();
        }
        queue.recover(Duration.ZERO);   // the last ender's move of the line may still run in its worker
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_KEYS_COLLECTION).countDocuments()).as("lines left")
                .isZero();
    }

    @Test
    void shouldKeepAFailedJobsPlaceAndLetADeadOneGo(MongoDatabase db) {
        OrderingKeysTest.seedLogs(db, "k");
        JobQueue queue = OrderingKeysTest.queue(db).retryBackoff(Duration.ofDays(1), Duration.ofDays(1)).build();
        queue.ensureIndexes();
        OrderingKeysTest.failNext("k-1", 1);
        queue.enqueue(limited("k", 1));
        queue.enqueue(limited("k", 2));
        assertThat(queue.processNext()).isPresent();
        assertThat(List.of(state(db, "k-1"), state(db, "k-2"))).as("failed, due tomorrow: still holds the slot")
                .containsExactly("failed", "awaiting");

        OrderingKeysTest.failNext("k-3", 1);
        queue.enqueue(limited("k", 3).withMaxAttempts(1));
        // due now instead of tomorrow: it runs again, then k-2; k-3 dies, and a dead job leaves its line
        assertThat(queue.operator().reschedule(OperationId.of("k-1"), java.time.Instant.EPOCH)).isTrue();
        while (queue.processNext().isPresent()) {
            // run what can run
        }
        assertThat(List.of(state(db, "k-1"), state(db, "k-2"), state(db, "k-3"))).containsExactly("done", "done",
                "dead");
        assertThat(OrderingKeysTest.seen(db, "k")).containsExactly(1, 2);
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_KEYS_COLLECTION).countDocuments()).isZero();
    }

    @Test
    void shouldRefuseABadLimitOrBothKeysBeforeAnyWrite(MongoDatabase db) {
        JobQueue queue = OrderingKeysTest.queue(db).build();
        assertThatThrownBy(() -> limited("k", 1).withConcurrencyKey("k", 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> limited("k", 1).withConcurrencyKey("k", ConcurrencyLimit.MAX_LIMIT + 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> queue.enqueue(limited("k", 1).withOrderingKey("k")))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> queue.enqueue(limited("k", 1).withConcurrencyKey(" ", 1)))
                .isInstanceOf(InvalidInputException.class);
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments()).isZero();
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_KEYS_COLLECTION).countDocuments()).isZero();
    }

    // heavy: on a real engine only when asked (docs/servers.md): the same line as an ordering key's, whose explorations
    // (OrderingKeysTest) run on every server; here a limit of 1 lets the first entry run instead of the head
    @Tag("heavy")
    @Test
    void shouldNeverLetTheSecondRunBeforeTheFirstEndedWhenAnyWriteCrashes(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client).name("concurrency-key")
                .workload(OrderingKeysTest.twoInLine(ConcurrencyKeysTest::limited)).recoveryFaults(true).build()
                .explore();

        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    // heavy: on a real engine only when asked (docs/servers.md): the same line as an ordering key's, whose explorations
    // (OrderingKeysTest) run on every server; here a limit of 1 lets the first entry run instead of the head
    @Tag("heavy")
    @Test
    void shouldNeverLetTheSecondRunBeforeTheFirstEndedWhateverRunsBesideIt(MongoTarget target) {
        InterleavingExplorer.Report report = OrderingKeysTest.actors(target, "concurrency-key",
                OrderingKeysTest.twoInLine(ConcurrencyKeysTest::limited), ConcurrencyKeysTest::limited).build()
                .explore();

        assertThat(report.violations()).as(report.toString()).isEmpty();
    }
}
