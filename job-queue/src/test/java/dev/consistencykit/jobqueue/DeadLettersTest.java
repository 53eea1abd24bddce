package dev.consistencykit.jobqueue;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** An operator's dead letters: replay in bulk, discard, delete, each by type, error text or id, raced by workers. */
@ExtendWith(MongoTestExtension.class)
class DeadLettersTest {

    private static Document job(MongoDatabase db, String id) {
        return db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("_id", id)).first();
    }

    /** A queue whose "poison" jobs apply their effect once, then fail; "flaky" ones fail with a given text. */
    private static JobQueue queue(MongoDatabase db, AtomicInteger runs, JobQueueBehaviourTest.ManualClock clock) {
        JobQueue.Builder b = JobQueue.builder(db).retryBackoff(Duration.ofMillis(1), Duration.ofMillis(1))
                .handler("poison", ctx -> {
                    runs.incrementAndGet();
                    ctx.applyOnce("counters", ctx.payload().get("c"), Updates.inc("n", 1));
                    throw new IllegalStateException("poisoned (" + ctx.payload().get("c") + ")");
                })
                .handler("flaky", ctx -> {
                    runs.incrementAndGet();
                    throw new IllegalStateException(ctx.payload().getString("error"));
                });
        if (clock != null) {
            b.serverClock(ServerClock.unsynchronized(clock));
        }
        return b.build();
    }

    private static void kill(JobQueue queue, String type, String id, Document payload) {
        assertThat(queue.apply(JobRequest.of(type, payload).withId(OperationId.of(id)).withMaxAttempts(1)).state())
                .isEqualTo("dead");
    }

    @Test
    void shouldReplayInBulkByTypeAndByErrorTextMatchedLiterally(MongoDatabase db) {
        AtomicInteger runs = new AtomicInteger();
        JobQueue queue = queue(db, runs, null);
        kill(queue, "flaky", "f1", new Document("error", "timeout talking to $smtp (.*)"));
        kill(queue, "flaky", "f2", new Document("error", "timeout talking to smtp"));
        kill(queue, "flaky", "f3", new Document("error", "refused"));
        db.getCollection("counters").insertOne(new Document("_id", "c1").append("n", 0));
        kill(queue, "poison", "p1", new Document("c", "c1"));

        assertThat(queue.operator().dead(DeadJobs.all().errorContaining("$smtp (.*)"), 0, 10)).extracting(i -> i.id())
                .containsExactly("f1");
        assertThat(queue.operator().replayDead(DeadJobs.all().errorContaining("$smtp (.*)")))
                .as("the text, not a pattern")
                .isEqualTo(1);
        assertThat(job(db, "f1").getString("state")).isEqualTo("todo");
        assertThat(job(db, "f2").getString("state")).isEqualTo("dead");
        assertThat(queue.operator().replayDead(DeadJobs.all().ofType("flaky").errorContaining("timeout"))).isEqualTo(1);
        assertThat(queue.operator().replayDead(DeadJobs.all().ofType("$ne"))).isZero();
        assertThat(queue.operator().replayDead(DeadJobs.all().ofType("flaky"))).isEqualTo(1);   // f3
        assertThat(job(db, "p1").getString("state")).isEqualTo("dead");
        assertThat(queue.operator().replayDead(DeadJobs.all())).isEqualTo(1);
        assertThat(queue.operator().replayDead(DeadJobs.all())).as("none left dead").isZero();
        assertThat(job(db, "f3").getInteger("attempts")).isZero();
    }

    @Test
    void shouldDiscardKeepingTheRecordSettlingItsMarksAndNeverRunItAgain(MongoDatabase db) {
        AtomicInteger runs = new AtomicInteger();
        JobQueue queue = queue(db, runs, null);
        MongoCollection<Document> counters = db.getCollection("counters");
        counters.insertOne(new Document("_id", "c1").append("n", 0));
        kill(queue, "poison", "p1", new Document("c", "c1"));
        assertThat(counters.find().first()).as("a dead job's mark stays, so a replay does not apply it again")
                .containsKey("appliedJobs");

        assertThat(queue.operator().discardDead(DeadJobs.ids(List.of(OperationId.of("p1"), OperationId.of("unknown")))))
                .isEqualTo(1);

        Document discarded = job(db, "p1");
        assertThat(discarded.getString("state")).isEqualTo("discarded");
        assertThat(discarded.getString("lastError")).contains("poisoned");
        assertThat(counters.find().first()).isEqualTo(new Document("_id", "c1").append("n", 1));
        assertThat(queue.operator().replayDead(OperationId.of("p1"))).as("discarded is final").isFalse();
        assertThat(queue.operator().replayDead(DeadJobs.all())).isZero();
        assertThat(queue.operator().discardDead(DeadJobs.all())).isZero();
        int before = runs.get();
        queue.recover();
        assertThat(queue.processNext()).isEmpty();
        assertThat(runs.get()).isEqualTo(before);
        assertThat(queue.status().count("discarded")).isEqualTo(1);
        assertThat(queue.status().count("dead")).isZero();
    }

    @Test
    void shouldDeleteReleasedJobsAndCompactHeldOnesUntilTheirWriterReleasesThem(MongoDatabase db) {
        AtomicInteger runs = new AtomicInteger();
        JobQueueBehaviourTest.ManualClock clock = new JobQueueBehaviourTest.ManualClock();
        JobQueue writer = queue(db, runs, clock);   // holds what it enqueued until it releases (prune, close)
        kill(writer, "flaky", "held", new Document("error", "x"));
        JobQueue released;
        try (JobQueue w2 = queue(db, runs, clock)) {
            released = w2;
            kill(w2, "flaky", "free", new Document("error", "x"));
        }
        assertThat(job(db, "held")).containsKey(RecordReleases.FIELD);
        assertThat(job(db, "free")).doesNotContainKey(RecordReleases.FIELD);

        JobQueue operatorsProcess = queue(db, runs, clock);
        JobQueueOperator operator = operatorsProcess.operator();
        assertThat(operator.deleteDead(DeadJobs.all().ofType("flaky"))).isEqualTo(2);

        assertThat(job(db, "free")).as("deleted").isNull();
        Document held = job(db, "held");
        assertThat(held.getString("state")).isEqualTo("discarded");
        assertThat(held).containsKey(RecordReleases.COMPACTED).doesNotContainKeys("payload", "lastError");
        assertThat(operator.deleteDead(DeadJobs.all())).as("counted once").isZero();

        writer.close();   // released: prune removes it past the retention
        clock.advance(JobQueueConfig.DEFAULT_RETENTION.plusMinutes(1));
        operatorsProcess.prune();
        assertThat(job(db, "held")).isNull();
        assertThat(released.operator().dead(0, 10)).isEmpty();
    }

    @Test
    void shouldRefuseHostileSelectionsBeforeAnyWrite(MongoDatabase db) {
        assertThatThrownBy(() -> DeadJobs.all().ofType("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> DeadJobs.all().errorContaining("x".repeat(DeadJobs.MAX_TEXT + 1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> DeadJobs.ids(List.of())).isInstanceOf(IllegalArgumentException.class);
        List<OperationId> many = new ArrayList<>();
        for (int i = 0; i <= DeadJobs.MAX_IDS; i++) {
            many.add(OperationId.of("j" + i));
        }
        assertThatThrownBy(() -> DeadJobs.ids(many)).isInstanceOf(IllegalArgumentException.class);
        assertThat(DeadJobs.all().ofType("email").errorContaining("timeout").toString())
                .isEqualTo("dead jobs with type email, error containing \"timeout\"");
    }

    /**
     * Two workers run poison jobs that die at once while an operator replays them in bulk, discards some by type and
     * error, and deletes others, over and over. At the end every job is discarded or deleted and each effect was
     * applied exactly once, with no mark left on any document: a replay never re-applies an effect, a discard never
     * half-applies, and no job a discard took ever runs again.
     */
    @Test
    void shouldStayExactlyOnceWithWorkersRacingReplayDiscardAndDelete(MongoDatabase db) throws Exception {
        AtomicInteger runs = new AtomicInteger();
        JobQueue queue = queue(db, runs, null);
        MongoCollection<Document> counters = db.getCollection("counters");
        int jobs = 40;
        for (int i = 0; i < jobs; i++) {
            counters.insertOne(new Document("_id", "c" + i).append("n", 0));
            queue.enqueue(JobRequest.of("poison", new Document("c", "c" + i)).withId(OperationId.of("p" + i))
                    .withMaxAttempts(1));
        }
        AtomicBoolean stop = new AtomicBoolean();
        CompletableFuture<Void> operator = CompletableFuture.runAsync(() -> {
            for (int round = 0; round < 30 && !stop.get(); round++) {
                queue.operator().replayDead(DeadJobs.all());
                queue.operator().discardDead(DeadJobs.all().errorContaining("(c" + round + ")"));
                queue.operator().replayDead(DeadJobs.all().ofType("poison"));
                queue.operator().deleteDead(DeadJobs.all().errorContaining("(c" + (round + 10) + ")"));
            }
        });
        try (JobWorkers workers = queue.startWorkers(2)) {
            operator.get(5, TimeUnit.MINUTES);
            assertThat(workers.health().alive()).isEqualTo(2);
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
            while (queue.status().inFlight() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
        } finally {
            stop.set(true);
        }
        queue.operator().deleteDead(DeadJobs.all());
        queue.recover();

        for (Document c : counters.find()) {
            assertThat(c).as("applied exactly once, no mark left").isEqualTo(new Document("_id", c.get("_id"))
                    .append("n", 1));
        }
        assertThat(queue.status().count("dead")).isZero();
        assertThat(queue.status().inFlight()).isZero();
        assertThat(runs.get()).as("replays ran them again").isGreaterThan(jobs);
    }
}
