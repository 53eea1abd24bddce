package dev.consistencykit.jobqueue;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.DuplicateDataException;
import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.MissingIndexException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.core.spi.UpdateOutcome;
import dev.consistencykit.testkit.AfterCommand;
import dev.consistencykit.testkit.DatabaseSnapshot;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.IndexCoverage;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

@ExtendWith(MongoTestExtension.class)
class JobQueueBehaviourTest {

    private static Document job(MongoDatabase db, Object id) {
        return db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("_id", id)).first();
    }

    @Test
    void shouldRejectBadInputBeforeAnyWrite(MongoDatabase db) {
        Friends.seedUsers(db, "ann", "bob");
        JobQueue queue = Friends.queue(db).build();
        DatabaseSnapshot before = DatabaseSnapshot.of(db);

        assertThatThrownBy(() -> queue.enqueue(JobRequest.of(null, new Document())))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("type must not be null");
        assertThatThrownBy(() -> queue.enqueue(JobRequest.of("  ", new Document())))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("type must not be blank");
        assertThatThrownBy(() -> queue.enqueue(Friends.befriend("ann", "bob").withMaxAttempts(0)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("maxAttempts must be >= 1, was 0");
        assertThatThrownBy(() -> queue.enqueue(JobRequest.of("befriend",
                new Document("a", new Document("$set", "x")))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("'$set'");
        assertThatThrownBy(() -> queue.enqueue(Friends.befriend("ann", "bob")
                .withId(new OperationId(new Document("$gt", 1)))))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> queue.enqueue(Friends.befriend("ann", "bob").delayedBy(Duration.ofSeconds(-1))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("delay");

        assertThat(DatabaseSnapshot.of(db)).isEqualTo(before);
        assertThatThrownBy(() -> JobQueue.builder(db).lease(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease must be > 0");
        assertThatThrownBy(() -> JobQueue.builder(db).maxAttempts(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldSendJobOfUnknownTypeDeadWithAClearReasonInsteadOfLooping(MongoDatabase db) {
        JobQueue queue = Friends.queue(db).build();
        queue.enqueue(JobRequest.of("teleport", new Document()).withId(OperationId.of("j1")));

        OperationResult result = queue.processNext().orElseThrow();

        assertThat(result.state()).isEqualTo("dead");
        assertThat(job(db, "j1").getString("lastError")).contains("no handler is registered for job type 'teleport'");
        assertThat(queue.processNext()).isEmpty();
    }

    @Test
    void shouldReturnTheExistingJobForTheSameDedupeKeyAndRefuseAnotherPayload(MongoDatabase db) {
        JobQueue queue = Friends.queue(db).build();
        queue.ensureIndexes();
        OperationId first = queue.enqueue(Friends.befriend("ann", "bob").withDedupeKey("ann+bob"));

        OperationId again = queue.enqueue(Friends.befriend("ann", "bob").withDedupeKey("ann+bob"));

        assertThat(again).isEqualTo(first);
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments()).isEqualTo(1);
        assertThatThrownBy(() -> queue.enqueue(Friends.befriend("ann", "cid").withDedupeKey("ann+bob")))
                .isInstanceOf(IdempotencyConflictException.class).hasMessageContaining("dedupe key 'ann+bob'");
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments()).isEqualTo(1);
    }

    @Test
    void shouldRefuseADedupeKeyBeforeTheUniqueIndexExistsAndWriteNothing(MongoDatabase db) {
        JobQueue queue = Friends.queue(db).build();
        MongoCollection<Document> users = db.getCollection("users");
        users.insertOne(new Document("_id", "ann"));

        assertThatThrownBy(() -> queue.enqueue(Friends.befriend("ann", "bob").withDedupeKey("k")))
                .isInstanceOf(MissingIndexException.class).hasMessageContaining("'dedupe'")
                .hasMessageContaining("ensureIndexes()");
        assertThatThrownBy(() -> queue.enqueueWith(users, "ann", null, Updates.set("x", 1),
                Friends.befriend("ann", "bob").withDedupeKey("k"))).isInstanceOf(MissingIndexException.class);
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments()).isZero();
        assertThat(users.find().first()).isEqualTo(new Document("_id", "ann"));

        queue.enqueue(Friends.befriend("ann", "bob"));   // without a key no unique index is at stake
        queue.ensureIndexes();
        OperationId first = queue.enqueue(Friends.befriend("ann", "cid").withDedupeKey("k"));
        assertThat(queue.enqueue(Friends.befriend("ann", "cid").withDedupeKey("k"))).isEqualTo(first);
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments()).isEqualTo(2);
    }

    @Test
    void shouldListTheJobsSharingADedupeKeyWhenEnsureIndexesCannotBuildTheIndex(MongoDatabase db) {
        MongoCollection<Document> jobs = db.getCollection(JobQueueConfig.DEFAULT_COLLECTION);
        jobs.insertOne(new Document("_id", "j1").append("state", "todo").append("dedupeKey", "k"));
        jobs.insertOne(new Document("_id", "j2").append("state", "todo").append("dedupeKey", "k"));
        jobs.insertOne(new Document("_id", "j3").append("state", "todo"));

        assertThatThrownBy(() -> Friends.queue(db).build().ensureIndexes())
                .isInstanceOf(DuplicateDataException.class)
                .hasMessageContaining("{dedupeKey: \"k\"} held by _id").hasMessageContaining("j1")
                .hasMessageContaining("j2").hasMessageNotContaining("j3");
    }

    @Test
    void shouldCountEveryJobOnceWhenOneIsRunWhileTheStatusIsRead(MongoTarget target, MongoDatabase db) {
        JobQueue queue = Friends.queue(db).build();
        for (int i = 0; i < 4; i++) {
            queue.enqueue(Friends.befriend("ann", "u" + i));
        }
        JobQueue worker = Friends.queue(db).build();

        StrategyStatus status;
        try (AfterCommand run = AfterCommand.once(target, db.getName(), worker::processNext)) {
            status = queue.status();
            assertThat(run.ran()).isTrue();
        }

        assertThat(status.total()).as("a snapshot: %s", status.countsByState()).isEqualTo(4);
        assertThat(queue.status().count("todo")).as("one job ran meanwhile").isEqualTo(3);
    }

    @Test
    void shouldFailAJobWhoseEffectTargetIsMissingWithTheReasonInEveryResult(MongoDatabase db) {
        ManualClock clock = new ManualClock();
        JobQueue queue = JobQueue.builder(db).maxAttempts(2).retryBackoff(Duration.ofMillis(1), Duration.ofMillis(1))
                .serverClock(ServerClock.unsynchronized(clock))
                .handler("credit", ctx -> ctx.applyOnce("wallets", "nobody", Updates.inc("n", 1))).build();

        OperationResult first = queue.apply(JobRequest.of("credit", new Document()).withId(OperationId.of("j")));

        assertThat(first.state()).isEqualTo(JobState.FAILED.stored());
        assertThat(first.reason()).hasValueSatisfying(r -> assertThat(r)
                .contains("EffectTargetMissingException").contains("wallets/nobody"));
        clock.advance(Duration.ofSeconds(1));   // past its back-off
        OperationResult last = queue.processNext().orElseThrow();
        assertThat(last.state()).isEqualTo(JobState.DEAD.stored());
        assertThat(last.reason()).hasValueSatisfying(r -> assertThat(r).contains("wallets/nobody"));
        assertThat(job(db, "j").getString("lastError")).contains("does not exist");
        assertThat(db.getCollection("wallets").countDocuments()).isZero();
        assertThat(queue.interrupted(Duration.ZERO, 10)).singleElement().satisfies(i -> {
            assertThat(i.state()).isEqualTo("dead");
            assertThat(i.detail()).contains("wallets/nobody").contains("replayDead");
        });
    }

    @Test
    void shouldFailAJobWhoseIncWouldPassTheRangeOfALongWithNothingWritten(MongoDatabase db) {
        db.getCollection("wallets").insertOne(new Document("_id", "w").append("n", Long.MAX_VALUE - 1));
        JobQueue queue = JobQueue.builder(db).maxAttempts(1)
                .handler("credit", ctx -> ctx.applyOnce("wallets", "w", Updates.inc("n", 5L))).build();

        OperationResult r = queue.apply(JobRequest.of("credit", new Document()).withId(OperationId.of("j")));

        assertThat(r.state()).isEqualTo(JobState.DEAD.stored());
        assertThat(r.reason()).hasValueSatisfying(reason -> assertThat(reason)
                .contains("EffectRefusedException").contains("64-bit"));
        assertThat(db.getCollection("wallets").find().first()).as("not wrapped, no mark left")
                .isEqualTo(new Document("_id", "w").append("n", Long.MAX_VALUE - 1));
    }

    /**
     * An effect's {@code $inc} on a field that holds no plain number (every kind a document may hold) fails the job
     * with {@link EffectRefusedException} and leaves the document as it was, mark and all; on a plain number of any
     * type it applies exactly once.
     */
    @Test
    void shouldRefuseAnEffectWhoseFieldHoldsNoPlainNumberWithNothingWritten(MongoDatabase db) {
        List<Object> refused = java.util.Arrays.asList(List.of(5, 50), List.of(), Double.NaN,
                org.bson.types.Decimal128.NaN, Double.POSITIVE_INFINITY, org.bson.types.Decimal128.NEGATIVE_INFINITY,
                "5", null, new Document("v", 1), true,
                org.bson.types.Decimal128.parse("9999999999.999999999999999999999999"));
        List<Object> plain = List.of(1, 2L, 2.5, org.bson.types.Decimal128.parse("1000.25"), -0.0);
        MongoCollection<Document> wallets = db.getCollection("wallets");
        JobQueue queue = JobQueue.builder(db).maxAttempts(1)
                .handler("credit", ctx -> ctx.applyOnce("wallets", ctx.payload().getString("w"),
                        Updates.inc("n", 5L))).build();
        List<String> problems = new ArrayList<>();
        int i = 0;
        for (Object value : concat(refused, plain)) {
            String w = "w" + i++;
            wallets.insertOne(new Document("_id", w).append("n", value));
            String before = wallets.find(eq("_id", w)).first().toJson();
            OperationResult r = queue.apply(JobRequest.of("credit", new Document("w", w)));
            String after = wallets.find(eq("_id", w)).first().toJson();
            if (refused.contains(value)) {
                if (!r.state().equals(JobState.DEAD.stored()) || r.reason().filter(reason -> reason.contains(
                        "EffectRefusedException")).isEmpty()) {
                    problems.add(value + ": " + r.state() + " " + r.reason());
                }
                if (!after.equals(before)) {
                    problems.add(value + ": " + before + " -> " + after);
                }
            } else if (!r.isCommitted() || !after.contains("\"n\"") || after.contains("appliedJobs")
                    || after.equals(before)) {
                problems.add(value + ": " + r.state() + " " + r.reason() + ", " + before + " -> " + after);
            }
        }
        assertThat(problems).isEmpty();
    }

    private static List<Object> concat(List<Object> a, List<Object> b) {
        List<Object> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    @Test
    void shouldFinishAJobThatAppliesIfPresentToAMissingDocument(MongoDatabase db) {
        List<UpdateOutcome> seen = new CopyOnWriteArrayList<>();
        JobQueue queue = JobQueue.builder(db).handler("credit", ctx -> seen.add(ctx.applyOnceIfPresent("wallets",
                "nobody", Updates.inc("n", 1)))).build();

        OperationResult r = queue.apply(JobRequest.of("credit", new Document()));

        assertThat(r.isCommitted()).isTrue();
        assertThat(seen).containsExactly(UpdateOutcome.MISSING);
        assertThat(db.getCollection("wallets").countDocuments()).isZero();
    }

    @Test
    void shouldStoreANullPayloadAsAnEmptyDocument(MongoDatabase db) {
        List<Document> seen = new CopyOnWriteArrayList<>();
        JobQueue queue = JobQueue.builder(db).handler("t", ctx -> seen.add(ctx.payload())).build();

        queue.apply(JobRequest.of("t", null).withId(OperationId.of("n")));

        assertThat(seen).containsExactly(new Document());
        assertThat(job(db, "n").get("payload")).isEqualTo(new Document());
    }

    @Test
    void shouldRunTheJobItClaimedWhenTheClaimsReplyWasLost(MongoDatabase db) {
        Friends.seedUsers(db, "ann", "bob");
        JobQueue queue = Friends.queue(db).build();
        queue.enqueue(Friends.befriend("ann", "bob").withId(OperationId.of("j1")));
        FaultInjector lost = FaultInjector.atWrite("findOneAndUpdate", JobQueueConfig.DEFAULT_COLLECTION, 1,
                FaultMode.TRANSIENT_AFTER);

        Optional<OperationResult> ran = Friends.queue(lost.wrap(db)).build().processNext();

        assertThat(ran).as("the retry found its own claim").hasValueSatisfying(r -> assertThat(r.isCommitted())
                .isTrue());
        assertThat(job(db, "j1").getString("state")).isEqualTo(JobState.DONE.stored());
        assertThat(job(db, "j1").getInteger("attempts")).isEqualTo(1);
    }

    @Test
    void shouldRetryWithBackoffThenSucceed(MongoDatabase db) {
        AtomicInteger calls = new AtomicInteger();
        // time moves only when the test moves it: a loaded machine cannot make the job due early
        ManualClock clock = new ManualClock();
        JobQueue queue = JobQueue.builder(db).retryBackoff(Duration.ofMillis(20), Duration.ofMillis(40))
                .serverClock(dev.consistencykit.core.ServerClock.unsynchronized(clock))
                .handler("flaky", ctx -> {
                    if (calls.incrementAndGet() < 3) {
                        throw new IllegalStateException("not yet (" + ctx.attempt() + ")");
                    }
                }).build();

        OperationResult first = queue.apply(JobRequest.of("flaky", new Document()).withId(OperationId.of("j1")));
        assertThat(first.state()).isEqualTo("failed");
        assertThat(queue.processNext()).as("not due before its back-off").isEmpty();
        assertThat(job(db, "j1").getString("lastError")).contains("not yet (1)");
        OperationResult end = null;
        for (int i = 0; i < 50 && (end == null || !end.isCommitted()); i++) {
            clock.advance(Duration.ofMillis(20));
            end = queue.processNext().orElse(end);
        }

        assertThat(end).isNotNull();
        assertThat(end.isCommitted()).isTrue();
        assertThat(job(db, "j1").getInteger("attempts")).isEqualTo(3);
    }

    @Test
    void shouldGoDeadAfterLastAttemptKeepingTheErrorAndComeBackWhenReplayed(MongoDatabase db) {
        AtomicInteger calls = new AtomicInteger();
        JobQueue queue = JobQueue.builder(db).retryBackoff(Duration.ofMillis(1), Duration.ofMillis(1))
                .handler("fragile", ctx -> {
                    if (calls.incrementAndGet() <= 2) {
                        throw new IllegalArgumentException("broken input");
                    }
                }).build();

        OperationResult dead = queue.apply(JobRequest.of("fragile", new Document()).withId(OperationId.of("j1"))
                .withMaxAttempts(1));

        assertThat(dead.outcome()).isEqualTo(OperationResult.Outcome.ABORTED);
        assertThat(dead.reason()).get().asString().contains("broken input");
        assertThat(job(db, "j1").getString("state")).isEqualTo("dead");
        assertThat(queue.operator().replayDead(OperationId.of("j1"))).isTrue();
        assertThat(job(db, "j1").getString("state")).isEqualTo("todo");
        assertThat(queue.processNext().orElseThrow().state()).isEqualTo("dead");
        assertThat(queue.operator().replayDead(OperationId.of("j1"))).isTrue();
        assertThat(queue.processNext().orElseThrow().isCommitted()).isTrue();
        assertThat(queue.operator().replayDead(OperationId.of("j1"))).as("only dead jobs are replayed").isFalse();
    }

    @Test
    void shouldRunHigherPriorityFirstAndNotBeforeDue(MongoDatabase db) {
        List<String> order = new CopyOnWriteArrayList<>();
        JobQueue queue = JobQueue.builder(db).handler("log", ctx -> order.add(ctx.payload().getString("n"))).build();
        queue.enqueue(JobRequest.of("log", new Document("n", "low")).withPriority(1));
        queue.enqueue(JobRequest.of("log", new Document("n", "high")).withPriority(9));
        queue.enqueue(JobRequest.of("log", new Document("n", "later")).withPriority(99)
                .delayedBy(Duration.ofHours(1)));

        while (queue.processNext().isPresent()) {
            // drain what is due
        }

        assertThat(order).containsExactly("high", "low");
        assertThat(queue.status().count("todo")).isEqualTo(1);
    }

    @Test
    void shouldPruneOnlyDoneJobsPastRetention(MongoDatabase db) {
        JobQueue queue = JobQueue.builder(db).handler("log", ctx -> { }).retention(Duration.ofDays(1)).build();
        queue.apply(JobRequest.of("log", new Document()).withId(OperationId.of("done")));
        queue.enqueue(JobRequest.of("log", new Document()).withId(OperationId.of("waiting")).delayedBy(
                Duration.ofDays(30)));
        JobQueue future = JobQueue.builder(db).handler("log", ctx -> { }).retention(Duration.ofDays(1))
                .serverClock(ServerClock.unsynchronized(Clock.offset(Clock.systemUTC(), Duration.ofDays(2)))).build();

        assertThat(queue.prune()).isZero();
        assertThat(future.prune()).isEqualTo(1);
        assertThat(job(db, "done")).isNull();
        assertThat(job(db, "waiting")).isNotNull();
    }

    @Test
    void shouldReportCountsByStateAndTypeAndTheQueueLag(MongoDatabase db) {
        JobQueue queue = Friends.queue(db).build();
        Friends.seedUsers(db, "ann", "bob");
        queue.enqueue(Friends.befriend("ann", "bob"));
        queue.enqueue(JobRequest.of("count", new Document("counter", "c0")));
        queue.enqueue(JobRequest.of("count", new Document("counter", "c0")).delayedBy(Duration.ofHours(1)));

        assertThat(queue.status().count("todo")).isEqualTo(3);
        assertThat(queue.status().inFlight()).isEqualTo(3);
        assertThat(queue.status().oldestInFlightAge()).isPresent();
        assertThat(queue.operator().countsByType().get("todo")).containsEntry("befriend", 1L).containsEntry("count", 2L);
    }

    @Test
    void shouldNotifyListenerAndCountMetrics(MongoDatabase db) {
        List<String> events = new CopyOnWriteArrayList<>();
        JobQueue queue = JobQueue.builder(db).retryBackoff(Duration.ofMillis(1), Duration.ofMillis(1))
                .handler("ok", ctx -> { })
                .handler("bad", ctx -> {
                    throw new IllegalStateException("nope");
                })
                .listener(new JobQueueListener() {
                    @Override
                    public void onDone(OperationId id, String type) {
                        events.add("done " + id);
                    }

                    @Override
                    public void onDead(OperationId id, String type, String error, Throwable thrown) {
                        events.add("dead " + id + " " + error);
                    }
                }).build();

        queue.apply(JobRequest.of("ok", new Document()).withId(OperationId.of("a")));
        queue.apply(JobRequest.of("bad", new Document()).withId(OperationId.of("b")).withMaxAttempts(1));

        assertThat(events).containsExactly("done a", "dead b IllegalStateException: nope");
        assertThat(queue.metrics().enqueued()).isEqualTo(2);
        assertThat(queue.metrics().done()).isEqualTo(1);
        assertThat(queue.metrics().dead()).isEqualTo(1);
    }

    @SuppressWarnings("try")   // the pool runs while open
    @Test
    void shouldKeepTheLeaseOfALongJobWithHeartbeatsWhileASweeperRuns(MongoDatabase db) throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        // the job runs 2.5 leases; heartbeats every third of a lease keep it
        JobQueue queue = JobQueue.builder(db).lease(Duration.ofSeconds(1)).retention(Duration.ofDays(1))
                .handler("long", ctx -> {
                    started.countDown();
                    Thread.sleep(2_500);
                }).build();
        queue.enqueue(JobRequest.of("long", new Document()).withId(OperationId.of("j1")));

        try (JobWorkers workers = queue.startWorkers(1)) {
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            for (int i = 0; i < 10; i++) {
                Thread.sleep(200);
                assertThat(queue.requeue(Duration.ofSeconds(1)).rolledBack()).as("the lease is renewed, nothing to requeue").isZero();
            }
            for (int i = 0; i < 200 && !"done".equals(job(db, "j1").getString("state")); i++) {
                Thread.sleep(50);
            }
        }

        assertThat(job(db, "j1").getString("state")).isEqualTo("done");
        assertThat(job(db, "j1").getInteger("attempts")).isEqualTo(1);
    }

    @Test
    void shouldRequeueAJobWhoseWorkerStoppedHeartbeating(MongoDatabase db) throws Exception {
        ManualClock clock = new ManualClock();
        dev.consistencykit.core.ServerClock time = dev.consistencykit.core.ServerClock.unsynchronized(clock);
        JobQueue queue = JobQueue.builder(db).lease(Duration.ofSeconds(2)).retention(Duration.ofDays(1))
                .serverClock(time).handler("log", ctx -> { }).build();
        queue.enqueue(JobRequest.of("log", new Document()).withId(OperationId.of("j1")));
        dev.consistencykit.testkit.FaultInjector dies = dev.consistencykit.testkit.FaultInjector.atWrite(
                "findOneAndUpdate", "jobs", 1,
                dev.consistencykit.testkit.FaultMode.CRASH_AFTER);
        JobQueue dying = JobQueue.builder(dies.wrap(db)).lease(Duration.ofSeconds(2)).serverClock(time)
                .retention(Duration.ofDays(1)).handler("log", ctx -> { }).build();
        assertThatThrownBy(dying::processNext).isInstanceOf(Error.class);
        assertThat(job(db, "j1").getString("state")).isEqualTo("processing");

        clock.advance(Duration.ofMillis(1_900));
        assertThat(queue.requeue(Duration.ofSeconds(1)).rolledBack()).as("the lease has not expired yet").isZero();
        clock.advance(Duration.ofMillis(200));
        assertThat(queue.requeue(Duration.ofSeconds(1)).rolledBack()).isEqualTo(1);

        assertThat(job(db, "j1").getString("state")).isEqualTo("todo");
        assertThat(queue.processNext().orElseThrow().isCommitted()).isTrue();
    }

    @Test
    void shouldGiveBackJobsStillRunningWhenShutdownGraceRunsOut(MongoDatabase db) throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        JobQueue queue = JobQueue.builder(db).handler("slow", ctx -> {
            started.countDown();
            never.await();
        }).build();
        queue.enqueue(JobRequest.of("slow", new Document()).withId(OperationId.of("j1")));
        JobWorkers workers = queue.startWorkers(1);
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

        boolean clean = workers.shutdown(Duration.ofMillis(200));

        assertThat(clean).isFalse();
        Document j = job(db, "j1");
        assertThat(j.getString("state")).as("given back").isIn("todo", "failed");
        assertThat(j.containsKey("owner")).isFalse();
    }

    @Test
    void shouldServeEveryQueryFromADeclaredIndex(MongoTarget target, MongoDatabase db) {
        Friends.seedUsers(db, "ann", "bob");
        JobQueue queue = Friends.queue(db).build();
        queue.ensureIndexes();
        JobQueue.ensureOutboxIndex(db.getCollection(Friends.USERS));
        JobQueue.ensureEffectIndexes(db.getCollection(Friends.USERS));
        try (IndexCoverage coverage = IndexCoverage.attach(target, db.getName())) {
            queue.apply(Friends.befriend("ann", "bob"));
            queue.enqueue(Friends.befriend("bob", "ann").withDedupeKey("k"));
            queue.enqueue(Friends.befriend("bob", "ann").withDedupeKey("k"));
            queue.enqueueWith(db.getCollection(Friends.USERS), "ann", null,
                    com.mongodb.client.model.Updates.set("x", 1), Friends.befriend("ann", "bob"));
            queue.relayOutbox(db.getCollection(Friends.USERS));
            queue.processNext();
            queue.requeue(Duration.ofSeconds(1));
            queue.recover(Duration.ZERO);
            queue.recover(Duration.ofSeconds(30));
            queue.status();
            queue.prune();

            assertThat(coverage.uncovered(db)).isEmpty();
        }
    }

    /** A clock that moves only when told to. */
    static final class ManualClock extends java.time.Clock {
        private final java.util.concurrent.atomic.AtomicReference<java.time.Instant> now =
                new java.util.concurrent.atomic.AtomicReference<>(java.time.Instant.parse("2030-01-01T00:00:00Z"));

        void advance(Duration by) {
            now.updateAndGet(t -> t.plus(by));
        }

        @Override
        public java.time.ZoneId getZone() {
            return java.time.ZoneOffset.UTC;
        }

        @Override
        public java.time.Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public java.time.Instant instant() {
            return now.get();
        }
    }
}
