package dev.consistencykit.jobqueue;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * The claim reads {@code claimAt}, which only a job a worker may claim holds ({@code todo} or {@code failed}, at its
 * run-at time): every way a job enters or leaves those states, or moves its run-at time, keeps that true. A job that
 * should be claimable and lacks it would never run; one that holds it in another state would run when it must not.
 */
@ExtendWith(MongoTestExtension.class)
class ClaimableJobsTest {

    private static void check(MongoDatabase db, String after) {
        assertThat(Friends.claimAtProblems(db)).as("after " + after).isEmpty();
    }

    private static JobQueue.Builder queue(MongoDatabase db, JobQueueBehaviourTest.ManualClock clock) {
        return JobQueue.builder(db).serverClock(ServerClock.unsynchronized(clock)).lease(Duration.ofSeconds(2))
                .retryBackoff(Duration.ofSeconds(5), Duration.ofSeconds(5))
                .handler("ok", ctx -> { })
                .handler("flaky", ctx -> {
                    throw new IllegalStateException("flaky");
                });
    }

    private static OperationId id(String id) {
        return OperationId.of(id);
    }

    private static String state(MongoDatabase db, String id) {
        return db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("_id", id)).first().getString("state");
    }

    @Test
    void shouldKeepClaimAtOnExactlyTheClaimableJobsThroughEveryTransition(MongoDatabase db) {
        JobQueueBehaviourTest.ManualClock clock = new JobQueueBehaviourTest.ManualClock();
        JobQueue queue = queue(db, clock).build();
        JobQueueOperator operator = queue.operator();

        queue.enqueue(JobRequest.of("ok", new Document()).withId(id("now")));
        queue.enqueue(JobRequest.of("ok", new Document()).withId(id("later")).delayedBy(Duration.ofHours(1)));
        queue.enqueue(JobRequest.of("ok", new Document()).withId(id("first")).withOrderingKey("k"));
        queue.enqueue(JobRequest.of("ok", new Document()).withId(id("second")).withOrderingKey("k"));
        queue.enqueue(JobRequest.of("ok", new Document()).withId(id("canceled")).delayedBy(Duration.ofHours(1)));
        queue.enqueue(JobRequest.of("flaky", new Document()).withId(id("flaky")).withMaxAttempts(2));
        check(db, "enqueues: due now, later, in a key's line");
        assertThat(state(db, "second")).isEqualTo("awaiting");

        assertThat(operator.reschedule(id("later"), clock.instant().plusSeconds(1))).isTrue();
        check(db, "a reschedule");
        assertThat(operator.cancel(id("canceled"))).isTrue();
        check(db, "a cancel");

        for (int i = 0; i < 10 && queue.processNext().isPresent(); i++) {
            check(db, "run " + i + " (done, failed, a key's line moving on)");
        }
        assertThat(state(db, "flaky")).isEqualTo("failed");
        assertThat(state(db, "second")).isEqualTo("done");

        clock.advance(Duration.ofSeconds(6));
        while (queue.processNext().isPresent()) {
            check(db, "runs once the retry is due");
        }
        assertThat(state(db, "flaky")).isEqualTo("dead");
        assertThat(operator.replayDead(id("flaky"))).isTrue();
        check(db, "a replay of one dead job");
        assertThat(queue.processNext().orElseThrow().isCommitted()).isFalse();
        clock.advance(Duration.ofSeconds(6));
        assertThat(queue.processNext()).isPresent();
        assertThat(operator.replayDead(DeadJobs.all())).isEqualTo(1);
        check(db, "a replay of dead jobs in bulk");
        assertThat(operator.rerun(id("now"))).isPresent();
        check(db, "a rerun");
    }

    @Test
    void shouldMakeJobsClaimableAgainWhenRecoveryRequeuesThemOrAWorkerGivesThemBack(MongoDatabase db)
            throws Exception {
        JobQueueBehaviourTest.ManualClock clock = new JobQueueBehaviourTest.ManualClock();
        queue(db, clock).build().enqueue(JobRequest.of("ok", new Document()).withId(id("j1")));
        FaultInjector dies = FaultInjector.atWrite("findOneAndUpdate", "jobs", 1, FaultMode.CRASH_AFTER);
        assertThatThrownBy(queue(dies.wrap(db), clock).build()::processNext).isInstanceOf(Error.class);
        assertThat(state(db, "j1")).isEqualTo("processing");
        check(db, "a claim");

        clock.advance(Duration.ofSeconds(3));
        assertThat(queue(db, clock).build().requeue(Duration.ofSeconds(1)).rolledBack()).isEqualTo(1);
        check(db, "recovery requeued a job whose lease ran out");
        assertThat(state(db, "j1")).isEqualTo("todo");

        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        JobQueue slow = queue(db, clock).handler("ok", ctx -> {
            started.countDown();
            never.await();
        }).build();
        JobWorkers workers = slow.startWorkers(1);
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(workers.shutdown(Duration.ofMillis(200))).isFalse();
        assertThat(state(db, "j1")).as("given back").isEqualTo("todo");
        check(db, "a worker gave its job back");
        assertThat(queue(db, clock).build().processNext().orElseThrow().isCommitted()).isTrue();
        check(db, "the job given back ran");
    }

    /**
     * A run-at time written without the claim time (by hand, or by a version of the queue before {@code claimAt}): a
     * worker's claim does not see it, recovery's pass over the jobs due for longer than its threshold makes it
     * claimable and runs it.
     */
    @Test
    void shouldRunAtRecoveryAJobWhoseRunAtWasWrittenWithoutItsClaimTime(MongoDatabase db) {
        JobQueueBehaviourTest.ManualClock clock = new JobQueueBehaviourTest.ManualClock();
        JobQueue queue = queue(db, clock).build();
        queue.enqueue(JobRequest.of("ok", new Document()).withId(id("moved")).delayedBy(Duration.ofHours(1)));
        queue.enqueue(JobRequest.of("ok", new Document()).withId(id("older")));
        var jobs = db.getCollection(JobQueueConfig.DEFAULT_COLLECTION);
        jobs.updateOne(eq("_id", "moved"), Updates.set("runAt", java.util.Date.from(clock.instant()
                .minusSeconds(1))));
        jobs.updateOne(eq("_id", "older"), Updates.unset("claimAt"));
        assertThat(Friends.claimAtProblems(db)).hasSize(2);
        assertThat(queue.processNext()).as("a worker's claim reads the claim time alone").isEmpty();

        queue.recover(Duration.ZERO);

        assertThat(List.of(state(db, "moved"), state(db, "older"))).containsExactly("done", "done");
        check(db, "recovery");
    }

    @Test
    void shouldMakeARelayedJobClaimableWhenItsHoldIsReleased(MongoDatabase db) {
        JobQueueBehaviourTest.ManualClock clock = new JobQueueBehaviourTest.ManualClock();
        JobQueue queue = queue(db, clock).build();
        db.getCollection("users").insertOne(new Document("_id", "ann"));
        // the call dies after its outbox write, before it records the job itself
        FaultInjector callDies = FaultInjector.atWrite("updateOne", "jobs", 1, FaultMode.CRASH_BEFORE);
        assertThatThrownBy(() -> queue(callDies.wrap(db), clock).build().enqueueWith(callDies.wrap(db)
                .getCollection("users"), "ann", null, Updates.set("x", 1), JobRequest.of("ok", new Document())
                .withId(id("relayed")))).isInstanceOf(Error.class);
        // the relayer dies once it wrote the job, held, before it found the entry still outboxed and released it
        FaultInjector dies = FaultInjector.atWrite("updateOne", "jobs", 1, FaultMode.CRASH_AFTER);
        assertThatThrownBy(() -> queue(dies.wrap(db), clock).build().relayOutbox(dies.wrap(db)
                .getCollection("users"), Duration.ZERO)).isInstanceOf(Error.class);
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("_id", "relayed")).first())
                .containsKey("heldBy");
        check(db, "a relayer wrote a held job");
        assertThat(queue.processNext()).as("held: no worker claims it").isEmpty();

        queue.recover(Duration.ZERO);   // releases the hold, then runs what is due
        assertThat(state(db, "relayed")).isEqualTo("done");
        check(db, "the relayed job ran");
    }
}
