package dev.consistencykit.jobqueue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * An enqueue lands, its reply is lost and its caller pauses; meanwhile a worker runs the job and a pruner whose clock
 * is days ahead runs; then the caller's retry is sent. It must find the job kept, never record it again: one enqueue
 * call, one run of its effect, however late the caller wakes.
 */
@ExtendWith(MongoTestExtension.class)
class NoResurrectionTest {

    private static final JobRequest COUNT = JobRequest.of("count", new Document("counter", "c0"))
            .withId(OperationId.of("j1"));

    /** A pruner whose clock is two days ahead: every done job is past its retention. */
    private static long prune(MongoDatabase db) {
        return Friends.prunerDaysAhead(db).prune();
    }

    private static long counter(MongoDatabase db) {
        return db.getCollection(Friends.COUNTERS).find(Filters.eq("_id", "c0")).first().getLong("n");
    }

    /** Ann charged with job j1 in her outbox; the call dies before it relays the job. */
    private static void outboxedByACallThatDied(MongoDatabase db) {
        FaultInjector dies = FaultInjector.atWrite("updateOne", "jobs", 1, FaultMode.CRASH_BEFORE);
        assertThatThrownBy(() -> Friends.queue(dies.wrap(db)).build().enqueueWith(dies.wrap(db).getCollection(
                Friends.USERS), "ann", null, Updates.inc("charged", 1), Friends.befriend("ann", "bob")
                .withId(OperationId.of("j1")))).isInstanceOf(Error.class);
    }

    @Test
    void shouldNotRecordAJobAgainThatRanAndWasPrunedWhileItsEnqueueWaitedForAReply(MongoDatabase db)
            throws Exception {
        Friends.seedCounters(db, 1);
        FaultInjector lost = FaultInjector.atWrite("updateOne", "jobs", 1, FaultMode.PAUSE_AFTER);
        CompletableFuture<OperationId> enqueue = CompletableFuture.supplyAsync(() -> Friends.queue(lost.wrap(db))
                .build().enqueue(COUNT));
        assertThat(lost.awaitPaused(Duration.ofSeconds(10))).isTrue();

        assertThat(Friends.queue(db).build().processNext()).isPresent();
        long pruned = prune(db);
        lost.release();
        assertThat(enqueue.get(30, TimeUnit.SECONDS).value()).isEqualTo("j1");
        JobQueue worker = Friends.queue(db).build();
        while (worker.processNext().isPresent()) {
            // a resurrected job would run again here
        }

        assertThat(counter(db)).isEqualTo(1);
        assertThat(Friends.invariants(db)).isEmpty();
        assertThat(pruned).as("the job its recorder has not released is kept").isZero();
    }

    @Test
    void shouldNotQueueAJobAgainWhenARelayerThatReadTheOutboxLongAgoWakesAfterItRanAndWasPruned(MongoDatabase db)
            throws Exception {
        Friends.seedUsers(db, "ann", "bob");
        MongoCollection<Document> users = db.getCollection(Friends.USERS);
        // the business write lands with its outbox entry; the caller dies before relaying it
        outboxedByACallThatDied(db);
        // a relayer reads the outbox and pauses before it records the job
        FaultInjector stale = FaultInjector.atWrite("updateOne", "jobs", 1, FaultMode.PAUSE);
        CompletableFuture<Integer> late = CompletableFuture.supplyAsync(() -> Friends.queue(stale.wrap(db)).build()
                .relayOutbox(stale.wrap(db).getCollection(Friends.USERS)));
        assertThat(stale.awaitPaused(Duration.ofSeconds(10))).isTrue();

        JobQueue other = Friends.queue(db).build();
        assertThat(other.relayOutbox(users)).isEqualTo(1);
        assertThat(other.processNext()).isPresent();
        other.recover(Duration.ofMinutes(1));   // its maintenance releases what it recorded
        // the outbox call died: an operator who knows no process of that time still runs releases its hold
        // (docs/operations.md)
        db.getCollection("jobs").updateMany(new Document(), com.mongodb.client.model.Updates.unset("outboxNonce"));
        assertThat(prune(db)).isEqualTo(1);
        stale.release();
        late.get(30, TimeUnit.SECONDS);
        while (other.processNext().isPresent()) {
            // a resurrected job would run again here
        }

        Document ann = users.find(Filters.eq("_id", "ann")).first();
        assertThat(ann.getList("friends", String.class)).containsExactly("bob");
        assertThat(ann.getInteger("charged")).isEqualTo(1);
        assertThat(db.getCollection("jobs").countDocuments()).as("the late relayer's record withdrawn").isZero();
    }

    /**
     * The relayer of the test above wakes, records the job held, and dies before it reads the outbox again: nothing
     * of today's relay finds that job (workers skip held jobs; it has no outbox entry to relay). Recovery must withdraw
     * it (its entry was relayed and settled by another), list it as interrupted until then, and leave nothing behind.
     */
    @Test
    void shouldWithdrawTheJobOfALateRelayerThatDiedHoldingItAfterItsEntryWasRelayed(MongoDatabase db) throws Exception {
        Friends.seedUsers(db, "ann", "bob");
        MongoCollection<Document> users = db.getCollection(Friends.USERS);
        outboxedByACallThatDied(db);
        // a relayer reads the outbox and pauses before it records the job; it wakes, records it held, finds the entry
        // gone and dies before it withdraws what it recorded
        java.util.concurrent.atomic.AtomicInteger jobWrites = new java.util.concurrent.atomic.AtomicInteger();
        FaultInjector stale = FaultInjector.withSchedule(site -> !"jobs".equals(site.collection())
                ? java.util.Optional.empty() : switch (jobWrites.incrementAndGet()) {
                    case 1 -> java.util.Optional.of(FaultMode.PAUSE);
                    case 2 -> java.util.Optional.of(FaultMode.CRASH_BEFORE);
                    default -> java.util.Optional.empty();
                });
        MongoDatabase relayer = stale.wrap(db);
        CompletableFuture<Integer> late = CompletableFuture.supplyAsync(() -> Friends.queue(relayer).build()
                .relayOutbox(relayer.getCollection(Friends.USERS)));
        assertThat(stale.awaitPaused(Duration.ofSeconds(10))).isTrue();

        JobQueue other = Friends.queue(db).build();
        assertThat(other.relayOutbox(users)).isEqualTo(1);
        assertThat(other.processNext()).isPresent();
        other.recover(Duration.ofMinutes(1));
        db.getCollection("jobs").updateMany(new Document(), Updates.unset("outboxNonce"));
        assertThat(prune(db)).isEqualTo(1);
        stale.release();
        assertThatThrownBy(() -> late.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(Error.class);
        assertThat(db.getCollection("jobs").find(Filters.exists("heldBy")).first()).as("recorded held, then died")
                .isNotNull();

        JobQueue restarted = Friends.queue(db).build();
        assertThat(restarted.interrupted(Duration.ZERO, 10)).singleElement()
                .satisfies(op -> assertThat(op.state()).isEqualTo("held"))
                .satisfies(op -> assertThat(op.detail()).contains("users"));
        restarted.recover(Duration.ZERO);
        while (restarted.processNext().isPresent()) {
            // a resurrected job would run again here
        }

        assertThat(db.getCollection("jobs").countDocuments()).as("the late relayer's record withdrawn").isZero();
        assertThat(restarted.interrupted(Duration.ZERO, 10)).isEmpty();
        Document ann = users.find(Filters.eq("_id", "ann")).first();
        assertThat(ann.getList("friends", String.class)).containsExactly("bob");
        assertThat(ann.getInteger("charged")).isEqualTo(1);
    }

    /** The same death with the entry still in the outbox: recovery releases the job, which runs once. */
    @Test
    void shouldReleaseTheJobOfARelayerThatDiedHoldingItWhileItsEntryIsStillOutboxed(MongoDatabase db) {
        Friends.seedUsers(db, "ann", "bob");
        MongoCollection<Document> users = db.getCollection(Friends.USERS);
        outboxedByACallThatDied(db);
        FaultInjector crash = FaultInjector.atWrite("updateOne", "jobs", 1, FaultMode.CRASH_AFTER);
        assertThatThrownBy(() -> Friends.queue(crash.wrap(db)).build().relayOutbox(crash.wrap(db).getCollection(
                Friends.USERS))).isInstanceOf(Error.class);

        JobQueue restarted = Friends.queue(db).build();
        assertThat(restarted.processNext()).as("held: no worker claims it").isEmpty();
        restarted.recover(Duration.ZERO);
        while (restarted.processNext().isPresent()) {
            // runs the released job
        }
        restarted.relayOutbox(users);   // settles the entry of the job that ran: it does not run again

        Document ann = users.find(Filters.eq("_id", "ann")).first();
        assertThat(ann.getList("friends", String.class)).containsExactly("bob");
        assertThat(ann.getInteger("charged")).isEqualTo(1);
        assertThat(ann).doesNotContainKey("jobOutbox");
        assertThat(Friends.invariants(db)).isEmpty();
    }

    /**
     * A writer that enqueued one job and then idles keeps it from a pruner in another process; past the retention the
     * pruner keeps only what a late retry of the enqueue reads, lists it with its writer, and removes it once the
     * writer closes. The late retry itself, after compaction, finds it and records nothing.
     */
    @Test
    void shouldKeepOnlyTheEvidenceOfAJobWhoseWriterIdlesPastItsRetentionAndRemoveItOnceTheWriterCloses(
            MongoDatabase db) {
        Friends.seedCounters(db, 1);
        JobQueue idle = Friends.queue(db).build();
        idle.ensureIndexes();
        idle.enqueue(COUNT);
        assertThat(Friends.queue(db).build().processNext()).isPresent();

        assertThat(prune(db)).as("held: not removed").isZero();
        Document kept = db.getCollection("jobs").find().first();
        assertThat(kept).containsEntry("state", "done").containsKey(RecordReleases.FIELD)
                .containsKey(RecordReleases.COMPACTED).doesNotContainKeys("payload", "effects");
        assertThat(Friends.queue(db).build().kept(Duration.ZERO, 10)).singleElement()
                .satisfies(k -> assertThat(k.compacted()).isTrue());
        assertThat(idle.enqueue(COUNT).value()).as("a retry of the enqueue finds it").isEqualTo("j1");
        assertThat(Friends.queue(db).build().processNext()).as("and runs nothing").isEmpty();

        idle.close();
        assertThat(prune(db)).as("released by close: removed").isEqualTo(1);
        assertThat(db.getCollection("jobs").countDocuments()).isZero();
        assertThat(counter(db)).isEqualTo(1);
    }

    @Test
    void shouldLetThePrunerRemoveAJobOnceItsRecorderReleasedIt(MongoDatabase db) {
        Friends.seedCounters(db, 1);
        JobQueue queue = Friends.queue(db).build();
        queue.enqueue(COUNT);
        queue.processNext();
        assertThat(db.getCollection("jobs").find().first()).containsKey(RecordReleases.FIELD);

        queue.recover(Duration.ofMinutes(1));   // releases what this instance recorded

        assertThat(db.getCollection("jobs").find().first()).doesNotContainKey(RecordReleases.FIELD);
        assertThat(prune(db)).isEqualTo(1);
    }
}
