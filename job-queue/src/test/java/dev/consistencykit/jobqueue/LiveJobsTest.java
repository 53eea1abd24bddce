package dev.consistencykit.jobqueue;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * An operator's actions on live jobs: a canceled job never runs (wherever it waits: due later, failed and due again,
 * awaiting its key's turn), a running or finished one is not canceled; a rescheduled job runs when it says; a rerun is
 * a new job naming the old one. The races with workers and the crashes at each write are in
 * {@link LiveJobsExplorationTest}.
 */
@ExtendWith(MongoTestExtension.class)
class LiveJobsTest {

    /** A time no test run reaches: a job moved there waits. */
    private static final Instant FAR = Instant.parse("2099-01-01T00:00:00Z");
    private static final JobRequest COUNT = JobRequest.of("count", new Document("counter", "c0"));

    private static Document job(MongoDatabase db, OperationId id) {
        return db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("_id", id.value())).first();
    }

    private static long counted(MongoDatabase db) {
        return db.getCollection(Friends.COUNTERS).find(eq("_id", "c0")).first().getLong("n");
    }

    @Test
    void shouldNeverRunACanceledJob(MongoDatabase db) {
        Friends.seedCounters(db, 1);
        JobQueue queue = Friends.queue(db).build();
        queue.ensureIndexes();
        OperationId later = queue.enqueue(COUNT.withId(OperationId.of("later")).delayedBy(Duration.ofHours(1)));
        OperationId now = queue.enqueue(COUNT.withId(OperationId.of("now")));

        assertThat(queue.operator().cancel(later)).isTrue();
        assertThat(queue.operator().cancel(now)).isTrue();
        assertThat(queue.operator().cancel(now)).as("canceled already").isFalse();
        assertThat(queue.operator().cancel(OperationId.of("unknown"))).isFalse();

        assertThat(queue.processNext()).isEmpty();
        assertThat(queue.operator().reschedule(later, Instant.EPOCH)).as("a canceled job is not moved").isFalse();
        assertThat(queue.processNext()).isEmpty();
        assertThat(counted(db)).isZero();
        assertThat(job(db, now).getString("state")).isEqualTo("discarded");
        assertThat(job(db, now).get("canceledBy")).isNotNull();
        assertThat(queue.enqueue(COUNT.withId(OperationId.of("now")))).as("its id stays taken").isEqualTo(now);
        assertThat(queue.processNext()).isEmpty();
    }

    @Test
    void shouldCancelAFailedJobAndSettleWhatItsAttemptLeft(MongoDatabase db) {
        Friends.seedCounters(db, 1);
        AtomicInteger attempts = new AtomicInteger();
        JobQueue queue = Friends.queue(db).maxAttempts(5).retryBackoff(Duration.ofHours(1), Duration.ofHours(1))
                .handler("flaky", ctx -> {
                    ctx.applyOnce(Friends.COUNTERS, "c0", Updates.combine(Updates.inc("n", 1L),
                            Updates.push(Friends.WITNESS, ctx.id().value())));
                    if (attempts.incrementAndGet() == 1) {
                        throw new IllegalStateException("first attempt fails after its effect");
                    }
                }).build();
        queue.ensureIndexes();
        OperationId id = queue.enqueue(JobRequest.of("flaky", new Document()).withId(OperationId.of("flaky")));
        assertThat(queue.processNext()).hasValueSatisfying(r -> assertThat(r.isCommitted()).isFalse());
        assertThat(job(db, id).getString("state")).isEqualTo("failed");

        assertThat(queue.operator().cancel(id)).isTrue();

        Document counter = db.getCollection(Friends.COUNTERS).find(eq("_id", "c0")).first();
        assertThat(counter.getLong("n")).as("the first attempt's effect stays").isEqualTo(1L);
        assertThat(counter.getList("appliedJobs", Object.class, List.of())).as("its mark is settled").isEmpty();
        assertThat(Friends.invariants(db)).isEmpty();
    }

    @Test
    void shouldNotCancelAJobAWorkerHolds(MongoDatabase db) throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        JobQueue queue = JobQueue.builder(db).handler("slow", ctx -> {
            running.countDown();
            release.await(30, TimeUnit.SECONDS);
        }).build();
        queue.ensureIndexes();
        OperationId id = queue.enqueue(JobRequest.of("slow", new Document()).withId(OperationId.of("slow")));
        ExecutorService worker = Executors.newSingleThreadExecutor();
        try {
            Future<Optional<OperationResult>> run = worker.submit(queue::processNext);
            assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(queue.operator().cancel(id)).isFalse();
            assertThat(queue.operator().reschedule(id, FAR)).isFalse();
            release.countDown();
            assertThat(run.get(30, TimeUnit.SECONDS)).hasValueSatisfying(r -> assertThat(r.isCommitted()).isTrue());
        } finally {
            release.countDown();
            worker.shutdownNow();
        }
        assertThat(queue.operator().cancel(id)).as("done").isFalse();
    }

    @Test
    void shouldLetTheRestOfAnOrderingKeyRunWhenOneOfItsJobsIsCanceled(MongoDatabase db) {
        Friends.seedCounters(db, 1);
        JobQueue queue = Friends.queue(db).build();
        queue.ensureIndexes();
        List<OperationId> ids = new ArrayList<>();
        for (String name : List.of("first", "second", "third")) {
            ids.add(queue.enqueue(COUNT.withId(OperationId.of(name)).withOrderingKey("k")));
        }
        assertThat(queue.operator().cancel(ids.get(1))).as("awaiting its turn").isTrue();
        assertThat(queue.operator().cancel(ids.get(0))).as("the head, due").isTrue();

        while (queue.processNext().isPresent()) {
            // run what is due
        }
        Document counter = db.getCollection(Friends.COUNTERS).find(eq("_id", "c0")).first();
        assertThat(counter.getList(Friends.WITNESS, Object.class)).containsExactly("third");
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_KEYS_COLLECTION).countDocuments()).as("no line left").isZero();
        assertThat(Friends.invariants(db)).isEmpty();
    }

    @Test
    void shouldRunARescheduledJobWhenItSays(MongoDatabase db) {
        Friends.seedCounters(db, 1);
        JobQueue queue = Friends.queue(db).build();
        queue.ensureIndexes();
        OperationId later = queue.enqueue(COUNT.withId(OperationId.of("later")).delayedBy(Duration.ofHours(1)));
        OperationId now = queue.enqueue(COUNT.withId(OperationId.of("now")));

        assertThat(queue.operator().reschedule(now, FAR)).isTrue();
        assertThat(queue.operator().reschedule(later, Instant.EPOCH)).isTrue();

        assertThat(queue.processNext()).hasValueSatisfying(r -> assertThat(r.id()).isEqualTo(later));
        assertThat(queue.processNext()).as("the other moved to 2099").isEmpty();
        assertThat(queue.operator().reschedule(later, Instant.EPOCH)).as("done").isFalse();
    }

    @Test
    void shouldRunAFinishedJobAgainAsANewJobNamingIt(MongoDatabase db) {
        Friends.seedCounters(db, 1);
        JobQueue queue = Friends.queue(db).build();
        queue.ensureIndexes();
        OperationId id = queue.enqueue(COUNT.withId(OperationId.of("once")).withPriority(3));
        assertThat(queue.operator().rerun(id)).as("not finished yet").isEmpty();
        assertThat(queue.processNext()).isPresent();

        OperationId again = queue.operator().rerun(id).orElseThrow();
        OperationId third = queue.operator().rerun(id).orElseThrow();

        assertThat(again).isNotEqualTo(third);
        assertThat(again.value().toString()).startsWith("once/rerun/");
        assertThat(job(db, again).getInteger("priority")).isEqualTo(3);
        while (queue.processNext().isPresent()) {
            // run both
        }
        assertThat(counted(db)).isEqualTo(3L);
        assertThat(queue.operator().rerun(OperationId.of("unknown"))).isEmpty();
        assertThat(Friends.invariants(db)).isEmpty();
    }
}
