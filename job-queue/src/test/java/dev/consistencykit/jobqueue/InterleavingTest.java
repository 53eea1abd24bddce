package dev.consistencykit.jobqueue;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.testkit.InterleavingExplorer;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * The actor table of the job queue, run at every driver call of a job's life and of an {@code enqueueWith}: a
 * recoverer, a second owner applying the same job, a worker, a pruner whose clock is days ahead, a relayer, and an
 * operator who deletes the job and enqueues it again under the same id.
 */
@ExtendWith(MongoTestExtension.class)
class InterleavingTest {

    private static final OperationId JOB = OperationId.of("j1");
    private static final java.time.Instant LEASE_END = java.time.Instant.parse("2030-01-01T00:00:00Z");

    private static JobQueue queue(MongoDatabase db) {
        return Friends.queue(db).build();
    }

    static InterleavingExplorer.Builder table(MongoTarget target, String name, FriendsWorkload workload) {
        return InterleavingExplorer.builder(target)
                .name(name)
                .workload(workload)
                .actor("recoverer", db -> {
                    queue(db).recover(Duration.ZERO);
                    return List.of();
                })
                .actor("second owner", db -> {
                    queue(db).apply(Friends.befriend("ann", "bob").withId(JOB));
                    return List.of();
                })
                .actor("worker", db -> {
                    queue(db).processNext();
                    return List.of();
                })
                .actor("pruner", db -> {
                    Friends.queue(db).serverClock(ServerClock.unsynchronized(Clock.offset(Clock.systemUTC(),
                            Duration.ofDays(8)))).build().prune();
                    return List.of();
                })
                .actor("relayer", db -> {
                    queue(db).relayOutbox(db.getCollection(Friends.USERS));
                    return List.of();
                })
                .actor("recreator", db -> {
                    // an operator deletes the unfinished job and enqueues it again under its id: a new record whose
                    // tokens start again, while the old claim may still be running (a done job enqueued again is a
                    // new job, applied again: ids are idempotency keys while their record is kept)
                    Document job = db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("_id", JOB.value()))
                            .first();
                    if (job != null && !"done".equals(job.getString("state"))) {
                        db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).deleteOne(eq("_id", JOB.value()));
                        queue(db).apply(Friends.befriend("ann", "bob").withId(JOB));
                    }
                    return List.of();
                });
    }

    /**
     * Ann and bob friends once each way (or, if the job was never written, not at all), each effect witnessed once;
     * the job done if it is kept; no mark or reservation left.
     */
    static List<String> invariants(MongoDatabase db, boolean mustExist) {
        List<String> problems = new ArrayList<>();
        Document job = db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("_id", JOB.value())).first();
        Document ann = db.getCollection(Friends.USERS).find(eq("_id", "ann")).first();
        Document bob = db.getCollection(Friends.USERS).find(eq("_id", "bob")).first();
        List<Object> annFriends = ann.getList("friends", Object.class, List.of());
        List<Object> bobFriends = bob.getList("friends", Object.class, List.of());
        boolean applied = annFriends.equals(List.of("bob")) && bobFriends.equals(List.of("ann"))
                && ann.getList(Friends.WITNESS, Object.class, List.of()).equals(List.of("j1"))
                && bob.getList(Friends.WITNESS, Object.class, List.of()).equals(List.of("j1"));
        boolean none = annFriends.isEmpty() && bobFriends.isEmpty();
        if (!applied && !(none && !mustExist && job == null)) {
            problems.add("ann's friends " + annFriends + " (" + ann.get(Friends.WITNESS) + "), bob's " + bobFriends
                    + " (" + bob.get(Friends.WITNESS) + ")");
        }
        if (job != null && !"done".equals(job.getString("state"))) {
            problems.add("job j1 is " + job.getString("state") + " after recovery");
        }
        for (Document user : List.of(ann, bob)) {
            for (String field : List.of("appliedJobs", "reservedJobs", "jobOutbox", "jobOutboxWritten",
                    "jobOutboxReserved")) {
                if (!user.getList(field, Object.class, List.of()).isEmpty()) {
                    problems.add(user.get("_id") + " still carries " + field + " " + user.get(field));
                }
            }
        }
        return problems;
    }

    @Test
    void shouldApplyEachEffectOnceWhenAnyActorRunsAtAnyCallOfAJob(MongoTarget target) {
        InterleavingExplorer.Report report = table(target, "job", FriendsWorkload.on("ann", "bob")
                .operation((db, queue, random) -> queue.apply(Friends.befriend("ann", "bob").withId(JOB)))
                .checkedBy(db -> invariants(db, true))).build().explore();

        assertThat(report.schedules()).isEqualTo(report.calls().size() * 2 * 6);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldWriteTheBusinessChangeOnceWhenAnyActorRunsAtAnyCallOfAnEnqueueWith(MongoTarget target) {
        InterleavingExplorer.Report report = table(target, "outbox", FriendsWorkload.on("ann", "bob")
                .operation((db, queue, random) -> {
                    queue.enqueueWith(db.getCollection(Friends.USERS), "ann", null, Updates.inc("charged", 1),
                            Friends.befriend("ann", "bob").withId(JOB));
                    queue.processNext();
                }).checkedBy(db -> {
            List<String> problems = new ArrayList<>(invariants(db, false));
            Document ann = db.getCollection(Friends.USERS).find(eq("_id", "ann")).first();
            boolean befriended = !ann.getList("friends", Object.class, List.of()).isEmpty();
            // charged once, or never: the call never wrote, or the second owner's job took its id first (a job id
            // is the idempotency key of the whole call, the business write included)
            int charged = ann.getInteger("charged", 0);
            if (charged > 1 || (charged == 0 && befriended && !ownJobFirst(db))) {
                problems.add("ann was charged " + ann.get("charged") + " times");
            }
            return problems;
        })).build().explore();

        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldNotRequeueAJobWhoseWorkerRenewedItsLeaseAfterTheSweeperReadIt(MongoTarget target) {
        InterleavingExplorer.Report report = InterleavingExplorer.builder(target)
                .name("sweep")
                .workload(FriendsWorkload.on()
                        .seededBy(db -> db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).insertOne(
                                new Document("_id", "j1").append("type", "befriend")
                                        .append("payload", new Document("a", "ann").append("b", "bob"))
                                        .append("state", "processing").append("priority", 0).append("attempts", 1)
                                        .append("maxAttempts", 5).append("owner", "w1").append("fencingToken", 1L)
                                        .append("leaseExpiresAt", java.util.Date.from(LEASE_END))))
                        // the sweeper's clock stands ten minutes past the lease
                        .operation((db, queue, random) -> Friends.queue(db).serverClock(ServerClock.unsynchronized(
                                Clock.fixed(LEASE_END.plus(Duration.ofMinutes(10)), java.time.ZoneOffset.UTC)))
                                .build().requeue(Duration.ofSeconds(1)))
                        .recoveredBy(db -> { })   // what the sweeper did is the point: nothing runs after it
                        .checkedBy(db -> {
                            Document job = db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("_id", "j1"))
                                    .first();
                            if (job.getBoolean("renewed", false) && !("processing".equals(job.getString("state"))
                                    && job.getLong("fencingToken") == 1L)) {
                                return List.of("the worker renewed its lease, yet the sweeper took the job: "
                                        + job.toJson());
                            }
                            return List.of();
                        }))
                .actor("owner heartbeat", db -> {
                    db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).updateOne(com.mongodb.client.model.Filters.and(
                            eq("_id", "j1"), eq("fencingToken", 1L), eq("state", "processing")), Updates.combine(
                            Updates.set("leaseExpiresAt", java.util.Date.from(LEASE_END.plus(Duration.ofDays(1)))),
                            Updates.set("renewed", true)));
                    return List.of();
                })
                .build().explore();

        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    /** Whether job j1 was enqueued by the second owner (a plain enqueue), not relayed from ann's outbox. */
    private static boolean ownJobFirst(MongoDatabase db) {
        Document job = db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("_id", JOB.value())).first();
        return job != null && !job.containsKey("outboxNonce");
    }
}
