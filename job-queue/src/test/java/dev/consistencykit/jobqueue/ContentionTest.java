package dev.consistencykit.jobqueue;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * Twelve threads write the same unique key at once, round after round, with no fault injected: every caller gets the
 * one outcome, and none an unknown one. On the real engine two writers of one unique key deadlock now and then (it
 * keeps unique indexes as exclusion constraints), which the server reports as a refused write: one of them went
 * through, and the other retries until its deadline — never an OutcomeUnknownException, as before when a deadlock
 * counted as a lost reply and five of them ended the call.
 */
@ExtendWith(MongoTestExtension.class)
class ContentionTest {

    private static final int THREADS = 12;
    private static final int ROUNDS = 10;

    /** {@code call} by {@link #THREADS} threads released together; what each returned (any exception fails it). */
    private static <T> List<T> atOnce(Callable<T> call) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<T>> calls = new ArrayList<>();
            for (int i = 0; i < THREADS; i++) {
                calls.add(pool.submit(() -> {
                    start.await();
                    return call.call();
                }));
            }
            start.countDown();
            List<T> results = new ArrayList<>();
            for (Future<T> f : calls) {
                results.add(f.get(2, TimeUnit.MINUTES));
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void shouldGiveEveryEnqueuerOfOneDedupeKeyTheOneJobsId(MongoDatabase db) throws Exception {
        JobQueue queue = Friends.queue(db).build();
        queue.ensureIndexes();
        for (int round = 0; round < ROUNDS; round++) {
            String key = "key-" + round;
            List<OperationId> ids = atOnce(() -> Friends.queue(db).build().enqueue(JobRequest.of("count",
                    new Document("counter", "c0")).withDedupeKey(key)));

            assertThat(ids).as("round %d", round).containsOnly(ids.get(0));
            assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments(eq("dedupeKey", key)))
                    .isEqualTo(1);
        }
    }

    @Test
    void shouldLineUpEveryJobEnqueuedOnOneOrderingKeyAtOnce(MongoDatabase db) throws Exception {
        Friends.seedCounters(db, 1);
        JobQueue queue = Friends.queue(db).build();
        queue.ensureIndexes();
        for (int round = 0; round < ROUNDS; round++) {
            String key = "line-" + round;
            List<OperationId> ids = atOnce(() -> Friends.queue(db).build().enqueue(JobRequest.of("count",
                    new Document("counter", "c0")).withOrderingKey(key)));

            assertThat(ids).as("round %d", round).doesNotHaveDuplicates().hasSize(THREADS);
        }
        while (queue.processNext().isPresent()) {
            // every job of every line runs, one at a time per line
        }
        assertThat(db.getCollection(Friends.COUNTERS).find(eq("_id", "c0")).first().getLong("n"))
                .isEqualTo((long) THREADS * ROUNDS);
    }

    @Test
    void shouldAdmitEveryJobEnqueuedOnOneConcurrencyKeyAtOnce(MongoDatabase db) throws Exception {
        Friends.seedCounters(db, 1);
        JobQueue queue = Friends.queue(db).build();
        queue.ensureIndexes();
        for (int round = 0; round < ROUNDS; round++) {
            String key = "limit-" + round;
            List<OperationId> ids = atOnce(() -> Friends.queue(db).build().enqueue(JobRequest.of("count",
                    new Document("counter", "c0")).withConcurrencyKey(key, 2)));

            assertThat(ids).as("round %d", round).doesNotHaveDuplicates().hasSize(THREADS);
        }
        while (queue.processNext().isPresent()) {
            // every job runs, at most two of a key at once
        }
        assertThat(db.getCollection(Friends.COUNTERS).find(eq("_id", "c0")).first().getLong("n"))
                .isEqualTo((long) THREADS * ROUNDS);
    }

    @Test
    void shouldKeepOneScheduleWhenTwelveProcessesDefineItAtOnce(MongoDatabase db) throws Exception {
        Friends.queue(db).build().ensureIndexes();
        for (int round = 0; round < ROUNDS; round++) {
            String name = "tick-" + round;
            List<RecurringJob> defined = atOnce(() -> Friends.queue(db).build().schedule(name,
                    Schedule.fixedDelay(Duration.ofHours(1)), JobRequest.of("count", new Document("counter", "c0"))));

            assertThat(defined).as("round %d", round).hasSize(THREADS)
                    .extracting(RecurringJob::nextRun).containsOnly(defined.get(0).nextRun());
            assertThat(db.getCollection(JobQueueConfig.DEFAULT_SCHEDULES_COLLECTION).countDocuments(eq("_id", name)))
                    .isEqualTo(1);
        }
    }
}
