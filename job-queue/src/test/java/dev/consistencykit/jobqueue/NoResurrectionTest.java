package dev.consistencykit.jobqueue;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.RecordReleases;
import dev.consistencykit.core.ServerClock;
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
        return Friends.queue(db).retention(Duration.ofDays(1)).serverClock(ServerClock.unsynchronized(
                Clock.offset(Clock.systemUTC(), Duration.ofDays(2)))).build().prune();
    }

    private static long counter(MongoDatabase db) {
        return db.getCollection(Friends.COUNTERS).find(Filters.eq("_id", "c0")).first().getLong("n");
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
