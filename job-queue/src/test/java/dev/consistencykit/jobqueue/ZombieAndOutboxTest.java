package dev.consistencykit.jobqueue;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

@ExtendWith(MongoTestExtension.class)
class ZombieAndOutboxTest {

    private static Document job(MongoDatabase db, Object id) {
        return db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("_id", id)).first();
    }

    @Test
    void shouldRefuseZombieWorkerAndApplyEffectOnceWhenItWakesAfterTakeover(MongoDatabase db) throws Exception {
        // write #3 reserves the handler's first effect, #5 applies it, #9 is the completion
        for (int site : new int[] {3, 5, 9}) {
            MongoTarget.drop(db);
            Friends.seedUsers(db, "ann", "bob");
            FaultInjector zombie = FaultInjector.at(site, FaultMode.PAUSE);
            JobQueue zombieQueue = Friends.queue(zombie.wrap(db)).build();
            CompletableFuture<OperationResult> paused = CompletableFuture.supplyAsync(
                    () -> zombieQueue.apply(Friends.befriend("ann", "bob").withId(OperationId.of("j1"))));
            assertThat(zombie.awaitPaused(Duration.ofSeconds(10))).isTrue();

            JobQueue other = Friends.queue(db).build();
            assertThat(other.recover(Duration.ZERO).rolledForward()).as("another worker finished it").isEqualTo(1);
            zombie.release();
            OperationResult late = paused.get(30, TimeUnit.SECONDS);

            assertThat(late.state()).as("site " + site).isEqualTo("done");
            assertThat(zombieQueue.metrics().leaseLost()).as("the zombie's completion was refused").isEqualTo(1);
            assertThat(zombieQueue.metrics().done()).isZero();
            assertThat(job(db, "j1").getInteger("attempts")).isEqualTo(2);
            assertThat(Friends.invariants(db)).as("site " + site).isEmpty();
            assertThat(db.getCollection(Friends.USERS).find(eq("_id", "ann")).first().getList("friends", String.class))
                    .containsExactly("bob");
        }
    }

    @Test
    void shouldNeverLoseAJobWrittenWithTheBusinessChangeWhateverCrashes(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client)
                .name("outbox")
                .workload(FriendsWorkload.on("ann", "bob").operation((db, queue, random) -> {
                    queue.enqueueWith(db.getCollection(Friends.USERS), "ann", null, Updates.set("status", "friendly"),
                            Friends.befriend("ann", "bob").withId(OperationId.of("j1")));
                    queue.processNext();
                }).alsoChecking(db -> {
                    List<String> problems = new java.util.ArrayList<>();
                    Document ann = db.getCollection(Friends.USERS).find(eq("_id", "ann")).first();
                    boolean business = "friendly".equals(ann.getString("status"));
                    Document j = job(db, "j1");
                    if (business && (j == null || !"done".equals(j.getString("state")))) {
                        problems.add("the business change is there but its job is " + (j == null ? "lost" : j));
                    }
                    if (!business && j != null) {
                        problems.add("a job exists without its business change");
                    }
                    for (String field : JobQueueConfigAccess.EFFECT_FIELDS) {
                        if (ann.containsKey(field)) {
                            problems.add("ann still carries " + field + " " + ann.get(field));
                        }
                    }
                    return problems;
                }))
                .build().explore();

        assertThat(report.sites()).extracting(s -> s.method() + " " + s.collection()).containsExactly(
                // reserve, business write with the job, record it held, release it to the workers, clear the outbox
                "updateOne users", "updateOne users", "updateOne jobs", "updateOne jobs", "updateOne users",
                "findOneAndUpdate jobs",
                "findOneAndUpdate users", "updateOne jobs", "updateOne users",
                "findOneAndUpdate users", "updateOne jobs", "updateOne users",
                "findOneAndUpdate jobs", "bulkWrite users", "updateOne jobs");
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldKeepTheJobWhenTheProcessDiesRightAfterTheBusinessWrite(MongoDatabase db) {
        Friends.seedUsers(db, "ann", "bob");
        // write #1 reserves the job id on ann, #2 is the business write with the job
        FaultInjector crash = FaultInjector.atWrite("updateOne", "users", 2, FaultMode.CRASH_AFTER);

        MongoDatabase dying = crash.wrap(db);
        assertThatThrownBy(() -> Friends.queue(dying).build().enqueueWith(dying.getCollection(Friends.USERS),
                "ann", null, Updates.set("status", "friendly"), Friends.befriend("ann", "bob")
                        .withId(OperationId.of("j1")))).isInstanceOf(Error.class);

        assertThat(job(db, "j1")).as("not in the queue yet").isNull();
        JobQueue queue = Friends.queue(db).build();
        assertThat(queue.relayOutbox(db.getCollection(Friends.USERS))).isEqualTo(1);
        assertThat(queue.relayOutbox(db.getCollection(Friends.USERS))).as("moved once").isZero();
        queue.recover(Duration.ZERO);
        assertThat(job(db, "j1").getString("state")).isEqualTo("done");
        assertThat(Friends.invariants(db)).isEmpty();
    }

    @Test
    void shouldWriteNothingWhenTheBusinessDocumentDoesNotMatch(MongoDatabase db) {
        Friends.seedUsers(db, "ann", "bob");

        Optional<OperationId> id = Friends.queue(db).build().enqueueWith(db.getCollection(Friends.USERS), "ann",
                eq("status", "banned"), Updates.set("status", "friendly"), Friends.befriend("ann", "bob"));

        assertThat(id).isEmpty();
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments()).isZero();
        assertThat(db.getCollection(Friends.USERS).find(eq("_id", "ann")).first().containsKey("status")).isFalse();
    }
}
