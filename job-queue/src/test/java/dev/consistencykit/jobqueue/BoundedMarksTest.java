package dev.consistencykit.jobqueue;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * The marks the job queue leaves on business documents are bounded by the jobs in flight on them, and no guard
 * depends on a mark that something later removes: a late worker or a retried {@code enqueueWith} is refused however
 * much has been relayed, completed and pruned since.
 */
@ExtendWith(MongoTestExtension.class)
class BoundedMarksTest {

    private static final OperationId JOB = OperationId.of("order-1-job");

    private static MongoDatabase fresh(MongoDatabase db, String suffix) {
        return MongoTarget.fromEnvironment().client().getDatabase(db.getName() + "_" + suffix);
    }

    private static Document user(MongoDatabase db, String id) {
        return db.getCollection(Friends.USERS).find(eq("_id", id)).first();
    }

    /** Where the relayer is when the caller's retry of its business write runs. */
    private enum Relayer { RELAYED, ENQUEUED_NOT_CLEARED, RELAYED_AND_RUN, AFTERWARDS }

    @Test
    void shouldChargeOnceAndNameTheJobWhenARelayerRunsWhileTheReplyIsLost(MongoDatabase db) throws Exception {
        for (boolean withFilter : new boolean[] {false, true}) {
            for (Relayer relayer : Relayer.values()) {
                String what = relayer + (withFilter ? " with a business filter" : "");
                String suffix = relayer.name().toLowerCase(java.util.Locale.ROOT) + (withFilter ? "f" : "");
                MongoDatabase fresh = fresh(db, suffix);
                Friends.seedUsers(fresh, "ann", "bob");
                fresh.getCollection(Friends.USERS).updateOne(eq("_id", "ann"), Updates.set("status", "new"));
                // write #1 reserves the job id on ann, #2 is the business write: it lands, its reply is lost, and the
                // caller stops before retrying it
                FaultInjector lost = FaultInjector.atWrite("updateOne", "users", 2, FaultMode.PAUSE_AFTER);
                JobQueue caller = Friends.queue(lost.wrap(fresh)).build();
                Bson filter = withFilter ? Filters.eq("status", "new") : null;
                CompletableFuture<Optional<OperationId>> call = CompletableFuture.supplyAsync(() -> caller.enqueueWith(
                        lost.wrap(fresh).getCollection(Friends.USERS), "ann", filter,
                        Updates.combine(Updates.inc("charged", 1), Updates.set("status", "paid")),
                        Friends.befriend("ann", "bob").withId(JOB)));
                assertThat(lost.awaitPaused(Duration.ofSeconds(10))).isTrue();

                JobQueue other = Friends.queue(fresh).build();
                FaultInjector relayPause = FaultInjector.atWrite("updateOne", "users", 1, FaultMode.PAUSE);
                CompletableFuture<Integer> halfway = null;
                switch (relayer) {
                    case RELAYED -> other.relayOutbox(fresh.getCollection(Friends.USERS));
                    case RELAYED_AND_RUN -> {
                        other.relayOutbox(fresh.getCollection(Friends.USERS));
                        assertThat(other.processNext()).get().extracting(OperationResult::isCommitted).isEqualTo(true);
                    }
                    case ENQUEUED_NOT_CLEARED -> {
                        JobQueue paused = Friends.queue(relayPause.wrap(fresh)).build();
                        halfway = CompletableFuture.supplyAsync(() -> paused.relayOutbox(
                                relayPause.wrap(fresh).getCollection(Friends.USERS)));
                        assertThat(relayPause.awaitPaused(Duration.ofSeconds(10))).isTrue();
                    }
                    default -> {
                    }
                }
                lost.release();
                Optional<OperationId> returned = call.get(30, TimeUnit.SECONDS);
                if (halfway != null) {
                    relayPause.release();
                    halfway.get(30, TimeUnit.SECONDS);
                }
                other.relayOutbox(fresh.getCollection(Friends.USERS));

                assertThat(lost.faults()).as(what).hasSize(1);
                assertThat(returned).as(what).contains(JOB);
                Document ann = user(fresh, "ann");
                assertThat(ann.getInteger("charged")).as("charged once, " + what).isEqualTo(1);
                assertThat(ann.getList("jobOutbox", Object.class, List.of())).as(what).isEmpty();
                assertThat(ann.getList("jobOutboxWritten", Object.class, List.of())).as(what).isEmpty();
                assertThat(ann.getList("jobOutboxReserved", Object.class, List.of())).as(what).isEmpty();
                assertThat(fresh.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments()).as(what)
                        .isEqualTo(1);
                MongoTarget.drop(fresh);
            }
        }
    }

    /**
     * Every job's record write was acknowledged before anyone paused, so the instances that wrote them released them
     * in their maintenance meanwhile ({@link dev.consistencykit.core.spi.RecordReleases}): pruning may remove them, and
     * what refuses a late writer here is its fencing and the outbox marks, not the record.
     */
    private static void releasedByTheirInstances(MongoDatabase db) {
        db.getCollection("jobs").updateMany(new Document(), Updates.unset(dev.consistencykit.core.spi.RecordReleases.FIELD));
    }

    @Test
    void shouldTellTheCallerItsWriteLandedAndChargeOnceWhenItWakesAfterItsJobRanPastThePruner(MongoDatabase db)
            throws Exception {
        Friends.seedUsers(db, "ann", "bob");
        FaultInjector lost = FaultInjector.atWrite("updateOne", "users", 2, FaultMode.PAUSE_AFTER);
        JobQueue caller = Friends.queue(lost.wrap(db)).build();
        CompletableFuture<Optional<OperationId>> call = CompletableFuture.supplyAsync(() -> caller.enqueueWith(
                lost.wrap(db).getCollection(Friends.USERS), "ann", null, Updates.inc("charged", 1),
                Friends.befriend("ann", "bob").withId(JOB)));
        assertThat(lost.awaitPaused(Duration.ofSeconds(10))).isTrue();
        JobQueue other = Friends.queue(db).build();
        other.relayOutbox(db.getCollection(Friends.USERS));
        other.processNext();
        releasedByTheirInstances(db);
        assertThat(Friends.prunerDaysAhead(db).prune()).as("the job waits for its outbox call").isZero();

        lost.release();

        assertThat(call.get(30, TimeUnit.SECONDS)).contains(JOB);
        assertThat(user(db, "ann").getInteger("charged")).isEqualTo(1);
        assertThat(user(db, "ann").getList("friends", String.class)).containsExactly("bob");
        caller.recover();   // the caller's maintenance releases what its calls wrote
        assertThat(Friends.prunerDaysAhead(db).prune()).isEqualTo(1);
    }

    @Test
    void shouldLeaveNoBookkeepingFieldOnABusinessDocumentOnceItsJobsRanAndSettled(MongoDatabase db) {
        Friends.seedUsers(db, "ann", "bob", "cid");
        JobQueue queue = Friends.queue(db).build();
        MongoCollection<Document> users = db.getCollection(Friends.USERS);

        queue.enqueueWith(users, "ann", null, Updates.set("plan", "pro"), Friends.befriend("ann", "bob"));
        queue.enqueueWith(users, "ann", null, Updates.set("seen", true), Friends.befriend("ann", "cid"));
        queue.enqueueWith(users, "bob", null, null, Friends.befriend("bob", "ann"));
        while (queue.processNext().isPresent()) {
            // run every job: each applies its effect on users, then settles
        }
        queue.recover();

        for (String name : List.of("ann", "bob")) {
            assertThat(user(db, name).keySet()).as(name).doesNotContain("jobOutbox", "jobOutboxReserved",
                    "jobOutboxWritten", "reservedJobs", "appliedJobs");
        }
        assertThat(user(db, "ann").getString("plan")).isEqualTo("pro");
    }

    /**
     * A job's effects on documents whose ids the server tells apart but Java holds equal ({@code {b: 2, a: 1}} and
     * {@code {a: 1, b: 2}}: a Document compares as a map) each apply once and each settle; ids the server holds equal
     * but Java does not ({@code 7} and {@code 7L}) are one document, charged once per effect named.
     */
    @Test
    void shouldSettleEveryDocumentAnEffectNamesAsTheServerTellsTheirIdsApart(MongoDatabase db) {
        MongoCollection<Document> counters = db.getCollection(Friends.COUNTERS);
        Document ba = new Document("b", 2).append("a", 1);
        Document ab = new Document("a", 1).append("b", 2);
        counters.insertMany(List.of(new Document("_id", ba).append("n", 0L), new Document("_id", ab).append("n", 0L),
                new Document("_id", 7).append("n", 0L)));
        JobQueue queue = Friends.queue(db).handler("both", ctx -> {
            ctx.applyOnce(Friends.COUNTERS, new Document("b", 2).append("a", 1), Updates.inc("n", 1L));
            ctx.applyOnce(Friends.COUNTERS, new Document("a", 1).append("b", 2), Updates.inc("n", 10L));
            ctx.applyOnce(Friends.COUNTERS, 7L, Updates.inc("n", 100L));
        }).build();

        assertThat(queue.apply(JobRequest.of("both", null).withId(OperationId.of("j"))).isCommitted()).isTrue();
        queue.recover();

        List<Document> all = counters.find().into(new ArrayList<>());
        assertThat(all).hasSize(3).allSatisfy(d -> assertThat(d.keySet()).as(d.toJson())
                .containsExactlyInAnyOrder("_id", "n"));
        assertThat(counters.find(eq("_id", ba)).first().getLong("n")).isEqualTo(1L);
        assertThat(counters.find(eq("_id", ab)).first().getLong("n")).isEqualTo(10L);
        assertThat(counters.find(eq("_id", 7)).first().getLong("n")).isEqualTo(100L);
    }

    @Test
    void shouldReportTheQueuedJobsIdWhenAnOutboxedJobIsDeduplicated(MongoDatabase db) {
        Friends.seedUsers(db, "ann", "bob");
        JobQueue queue = Friends.queue(db).build();
        queue.ensureIndexes();
        OperationId first = queue.enqueue(Friends.befriend("ann", "bob").withDedupeKey("k"));

        Optional<OperationId> again = queue.enqueueWith(db.getCollection(Friends.USERS), "ann", null,
                Updates.set("plan", "pro"), Friends.befriend("ann", "bob").withDedupeKey("k"));

        assertThat(again).contains(first);
        assertThat(user(db, "ann").getString("plan")).isEqualTo("pro");
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments()).isEqualTo(1);
    }

    @Test
    void shouldRefuseAnOutboxedJobWhoseDedupeKeyHoldsAnotherJobBeforeTheBusinessWrite(MongoDatabase db) {
        Friends.seedUsers(db, "ann", "bob", "cid");
        JobQueue queue = Friends.queue(db).build();
        queue.ensureIndexes();
        queue.enqueue(Friends.befriend("ann", "bob").withDedupeKey("k"));
        Document before = user(db, "ann");

        assertThatThrownBy(() -> queue.enqueueWith(db.getCollection(Friends.USERS), "ann", null,
                Updates.set("plan", "pro"), Friends.befriend("ann", "cid").withDedupeKey("k")))
                .isInstanceOf(IdempotencyConflictException.class);
        assertThat(user(db, "ann")).isEqualTo(before);
    }

    @Test
    void shouldNotLetAKeyTakenAfterTheBusinessWriteBlockTheRelayForEver(MongoDatabase db) {
        Friends.seedUsers(db, "ann", "bob", "cid");
        MongoCollection<Document> users = db.getCollection(Friends.USERS);
        Friends.queue(db).build().ensureIndexes();
        FaultInjector crash = FaultInjector.atWrite("updateOne", JobQueueConfig.DEFAULT_COLLECTION, 1,
                FaultMode.CRASH_BEFORE);
        try {
            Friends.queue(crash.wrap(db)).build().enqueueWith(crash.wrap(db).getCollection(Friends.USERS), "ann",
                    null, Updates.set("plan", "pro"), Friends.befriend("ann", "bob").withDedupeKey("k"));
        } catch (Error expected) {
            // the business write landed; the process died before the relay
        }
        JobQueue queue = Friends.queue(db).build();
        queue.enqueue(Friends.befriend("ann", "cid").withDedupeKey("k"));   // the key goes to another job meanwhile

        queue.relayOutbox(users);

        assertThat(user(db, "ann")).doesNotContainKeys("jobOutbox", "jobOutboxWritten", "jobOutboxReserved");
        assertThat(user(db, "ann").getString("plan")).isEqualTo("pro");
        assertThat(queue.relayOutbox(users)).isZero();
    }

    @Test
    void shouldLeaveTheDocumentAsItWasWhenTheServerRefusesTheBusinessWrite(MongoDatabase db) {
        Friends.seedUsers(db, "ann", "bob");
        db.getCollection(Friends.USERS).updateOne(eq("_id", "ann"), Updates.set("charged", "not a number"));
        Document before = user(db, "ann");

        assertThatThrownBy(() -> Friends.queue(db).build().enqueueWith(db.getCollection(Friends.USERS), "ann", null,
                Updates.inc("charged", 1), Friends.befriend("ann", "bob").withId(JOB)))
                .isInstanceOf(RuntimeException.class);

        assertThat(user(db, "ann")).as("not even an empty reservation array").isEqualTo(before);
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments()).isZero();
    }

    /** A queue whose clock runs eight days ahead: past the default retention of done jobs. */
    @Test
    void shouldRefuseAZombieWorkerWhenItsJobWasFinishedByAnotherAndPruned(MongoDatabase db) throws Exception {
        // apply(): #1 enqueue, #2 claim, #3 the effect's reservation, #4 the claim's check, #5 the effect
        for (int site : new int[] {3, 5}) {
            MongoDatabase fresh = fresh(db, "zombie" + site);
            fresh.getCollection(Friends.COUNTERS).insertOne(new Document("_id", "c").append("n", 0L));
            FaultInjector zombie = FaultInjector.at(site, FaultMode.PAUSE);
            JobQueue zombieQueue = Friends.queue(zombie.wrap(fresh)).build();
            CompletableFuture<OperationResult> paused = CompletableFuture.supplyAsync(() -> zombieQueue.apply(
                    JobRequest.of("count", new Document("counter", "c")).withId(JOB)));
            assertThat(zombie.awaitPaused(Duration.ofSeconds(10))).isTrue();

            assertThat(Friends.queue(fresh).build().recover(Duration.ZERO).rolledForward()).isEqualTo(1);
            releasedByTheirInstances(fresh);
            assertThat(Friends.prunerDaysAhead(fresh).prune()).as("site " + site).isEqualTo(1);
            Document before = fresh.getCollection(Friends.COUNTERS).find().first();
            zombie.release();
            OperationResult late = paused.get(30, TimeUnit.SECONDS);

            assertThat(late.state()).as("the zombie reports what became of the job, site " + site).isEqualTo("done");
            assertThat(zombieQueue.metrics().leaseLost()).as("site " + site).isEqualTo(1);
            Document after = fresh.getCollection(Friends.COUNTERS).find().first();
            assertThat(after.getLong("n")).as("site " + site).isEqualTo(1);
            assertThat(after.getList(Friends.WITNESS, Object.class)).as("site " + site).containsExactly("order-1-job");
            assertThat(after).as("site " + site).doesNotContainKeys("appliedJobs", "reservedJobs");
            assertThat(after.getLong("n")).isEqualTo(before.getLong("n"));
            MongoTarget.drop(fresh);
        }
    }

    @Test
    void shouldRefuseAZombieWorkerWhoseJobIdWasReusedAfterItWasPruned(MongoDatabase db) throws Exception {
        Friends.seedUsers(db, "ann", "bob", "cid");
        // worker 1 claimed j1 (ann and bob) and pauses before its first effect (write #3 reserves ann)
        FaultInjector zombie = FaultInjector.atWrite("findOneAndUpdate", "users", 1, FaultMode.PAUSE);
        CompletableFuture<OperationResult> first = CompletableFuture.supplyAsync(() -> Friends.queue(zombie.wrap(db))
                .build().apply(Friends.befriend("ann", "bob").withId(JOB)));
        assertThat(zombie.awaitPaused(Duration.ofSeconds(10))).isTrue();
        Friends.queue(db).build().recover(Duration.ZERO);
        releasedByTheirInstances(db);
        assertThat(Friends.prunerDaysAhead(db).prune()).isEqualTo(1);
        // the id is free again: another j1 (ann and cid), claimed by worker 2, which pauses at the same point
        FaultInjector second = FaultInjector.atWrite("findOneAndUpdate", "users", 1, FaultMode.PAUSE);
        CompletableFuture<OperationResult> reused = CompletableFuture.supplyAsync(() -> Friends.queue(second.wrap(db))
                .build().apply(Friends.befriend("ann", "cid").withId(JOB)));
        assertThat(second.awaitPaused(Duration.ofSeconds(10))).isTrue();

        zombie.release();
        first.get(30, TimeUnit.SECONDS);
        second.release();
        OperationResult result = reused.get(30, TimeUnit.SECONDS);

        assertThat(result.isCommitted()).isTrue();
        assertThat(user(db, "ann").getList("friends", String.class)).containsExactly("bob", "cid");
        assertThat(user(db, "bob").getList("friends", String.class)).containsExactly("ann");
        assertThat(user(db, "cid").getList("friends", String.class)).containsExactly("ann");
    }

    // heavy: on a real engine only when asked (docs/servers.md): 3,000 jobs on one document: volume
    @Tag("heavy")
    @Test
    void shouldKeepAHotCounterTheSameSizeAfterAHundredOrThreeThousandJobs(MongoDatabase db) throws Exception {
        MongoCollection<Document> counters = db.getCollection(Friends.COUNTERS);
        counters.insertOne(new Document("_id", "hot").append("n", 0L));
        JobQueue queue = JobQueue.builder(db).retryPolicy(Friends.FAST_RETRY)
                .handler("hit", ctx -> ctx.applyOnce(Friends.COUNTERS, "hot", Updates.inc("n", 1L))).build();

        hit(queue, 0, 100);
        long afterHundred = size(counters);
        hit(queue, 100, 3_000);
        long afterThreeThousand = size(counters);

        assertThat(counters.find().first().getLong("n")).isEqualTo(3_000);
        assertThat(afterThreeThousand).isEqualTo(afterHundred);
    }

    private static void hit(JobQueue queue, int from, int to) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    for (int i = from + thread; i < to; i += 4) {
                        OperationResult r = queue.apply(JobRequest.of("hit", new Document()).withId(OperationId.of(i)));
                        assertThat(r.isCommitted()).isTrue();
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get(5, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static long size(MongoCollection<Document> counters) {
        return counters.withDocumentClass(RawBsonDocument.class).find(eq("_id", "hot")).first().getByteBuffer()
                .remaining();
    }
}
