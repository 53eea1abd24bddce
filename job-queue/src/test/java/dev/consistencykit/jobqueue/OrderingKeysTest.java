package dev.consistencykit.jobqueue;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.bson.Document;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.InterleavingExplorer;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * Ordering keys: the jobs of a key run one at a time in the order they joined its line, whatever their priority; a
 * dead job blocks its key only, until replayed or discarded; what a crash or a paused process leaves is finished by
 * recovery, and nothing stays on the line once its jobs ended.
 */
@ExtendWith(MongoTestExtension.class)
class OrderingKeysTest {

    private static final String LOGS = "logs";
    /** Attempts left to fail per job id, for the jobs a test makes fail. */
    private static final Map<Object, Integer> FAILURES = new ConcurrentHashMap<>();

    /** A queue whose "step" jobs append their {@code n} to the log of their {@code log}, once. */
    static JobQueue.Builder queue(MongoDatabase db) {
        return Friends.queue(db).handler("step", ctx -> {
            Integer left = FAILURES.computeIfPresent(ctx.id().value(), (k, v) -> v - 1);
            if (left != null && left >= 0) {
                throw new IllegalStateException("made to fail");
            }
            Document p = ctx.payload();
            ctx.applyOnce(LOGS, p.get("log"), Updates.push("seen", p.get("n")));
        }).handler("tick", ctx -> ctx.applyOnce(LOGS, "ticks", Updates.push("seen", ctx.id().value())));
    }

    /** Makes job {@code id} fail its next {@code times} attempts. */
    static void failNext(String id, int times) {
        FAILURES.put(id, times);
    }

    static JobRequest step(String log, int n) {
        return JobRequest.of("step", new Document("log", log).append("n", n)).withId(OperationId.of(log + "-" + n))
                .withOrderingKey(log);
    }

    static void seedLogs(MongoDatabase db, String... logs) {
        for (String log : logs) {
            db.getCollection(LOGS).insertOne(new Document("_id", log).append("seen", List.of()));
        }
    }

    static List<Object> seen(MongoDatabase db, String log) {
        return db.getCollection(LOGS).find(eq("_id", log)).first().getList("seen", Object.class);
    }

    private static String state(MongoDatabase db, String id) {
        return db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("_id", id)).first().getString("state");
    }

    private static void drain(JobQueue queue) {
        while (queue.processNext().isPresent()) {
            // run every job that can run
        }
    }

    @Test
    void shouldRunAKeysJobsOneAtATimeInTheOrderTheyArrivedWhateverTheirPriority(MongoDatabase db) {
        seedLogs(db, "k", "other");
        JobQueue queue = queue(db).build();
        queue.ensureIndexes();
        queue.enqueue(step("k", 1));
        queue.enqueue(step("k", 2).withPriority(9));
        queue.enqueue(step("k", 3).withPriority(5));
        queue.enqueue(step("other", 1));

        assertThat(List.of(state(db, "k-1"), state(db, "k-2"), state(db, "k-3"), state(db, "other-1")))
                .containsExactly("todo", "awaiting", "awaiting", "todo");
        assertThat(queue.status().countsByState()).containsEntry("awaiting", 2L);
        assertThat(queue.operator().backlog()).singleElement().satisfies(b -> {
            assertThat(List.of(b.waiting(), b.scheduled(), b.awaiting(), b.running(), b.dead()))
                    .containsExactly(2L, 0L, 2L, 0L, 0L);
            assertThat(b.oldestWaiting()).isPresent();
        });
        drain(queue);

        assertThat(seen(db, "k")).containsExactly(1, 2, 3);
        assertThat(seen(db, "other")).containsExactly(1);
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_KEYS_COLLECTION).countDocuments())
                .as("nothing left on a line once its jobs ended").isZero();
    }

    @Test
    void shouldBlockOnlyTheKeyOfADeadJobUntilItIsReplayedOrDiscarded(MongoDatabase db) {
        seedLogs(db, "k", "j", "other");
        JobQueue queue = queue(db).build();
        queue.ensureIndexes();
        FAILURES.put("k-1", 1);
        FAILURES.put("j-1", 1);
        queue.enqueue(step("k", 1).withMaxAttempts(1));
        queue.enqueue(step("k", 2));
        queue.enqueue(step("j", 1).withMaxAttempts(1));
        queue.enqueue(step("j", 2));
        queue.enqueue(step("other", 1));
        drain(queue);

        assertThat(List.of(state(db, "k-1"), state(db, "k-2"), state(db, "j-2"))).containsExactly("dead", "awaiting",
                "awaiting");
        assertThat(seen(db, "other")).containsExactly(1);
        assertThat(queue.operator().dead(0, 10)).extracting(op -> op.detail()).allMatch(d ->
                d.contains("blocks ordering key"));

        assertThat(queue.operator().replayDead(OperationId.of("k-1"))).isTrue();
        assertThat(queue.operator().discardDead(DeadJobs.ids(List.of(OperationId.of("j-1"))))).isEqualTo(1);
        drain(queue);

        assertThat(seen(db, "k")).containsExactly(1, 2);
        assertThat(seen(db, "j")).as("the discarded job never ran; the next one did").containsExactly(2);
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_KEYS_COLLECTION).countDocuments()).isZero();
    }

    @Test
    void shouldOrderOutboxedJobsAsTheyReachTheQueue(MongoDatabase db) {
        seedLogs(db, "k");
        db.getCollection("orders").insertMany(List.of(new Document("_id", "o1"), new Document("_id", "o2")));
        JobQueue queue = queue(db).build();
        queue.ensureIndexes();
        JobQueue.ensureOutboxIndex(db.getCollection("orders"));
        queue.enqueueWith(db.getCollection("orders"), "o1", null, Updates.set("placed", true), step("k", 1));
        queue.enqueueWith(db.getCollection("orders"), "o2", null, Updates.set("placed", true), step("k", 2));
        queue.enqueue(step("k", 3));
        assertThat(List.of(state(db, "k-1"), state(db, "k-2"), state(db, "k-3"))).as("relayed with their key")
                .containsExactly("todo", "awaiting", "awaiting");
        // the call relays its own entry from the document, as a relay after a crash would: the key goes with it
        queue.insertWith(db.getCollection("orders"), new Document("_id", "o4"), step("k", 4));
        drain(queue);

        assertThat(seen(db, "k")).containsExactly(1, 2, 3, 4);
    }

    @Test
    void shouldRefuseABadOrderingKeyBeforeAnyWrite(MongoDatabase db) {
        JobQueue queue = queue(db).build();
        for (String bad : new String[] {" ", "", "x".repeat(2_000)}) {
            assertThatThrownBy(() -> queue.enqueue(step("k", 1).withOrderingKey(bad))).as(bad)
                    .isInstanceOf(InvalidInputException.class);
        }
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_KEYS_COLLECTION).countDocuments()).isZero();
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments()).isZero();
        queue.enqueue(step("k", 1));
        assertThatThrownBy(() -> queue.enqueue(step("k", 1).withOrderingKey("other")))
                .as("a repeat of a job's id under another key is another job")
                .isInstanceOf(IdempotencyConflictException.class);
    }

    // ---------------------------------------------------------------- crashes and interleavings

    /** Two jobs of one key enqueued, then run. */
    static FriendsWorkload twoInLine() {
        return twoInLine(OrderingKeysTest::step);
    }

    /** Two jobs made by {@code jobs} (a log and a number: {@code k-1}, {@code k-2}) enqueued, then run. */
    static FriendsWorkload twoInLine(java.util.function.BiFunction<String, Integer, JobRequest> jobs) {
        return twoInLine(jobs, JobQueueConfig.DEFAULT_MAX_KEY_BACKLOG);
    }

    /**
     * {@link #twoInLine(java.util.function.BiFunction)} on queues whose lines hold at most {@code backlog} jobs: at
     * 4, a line keeps one entry per document, so the second join moves the first into a chunk of its own.
     */
    static FriendsWorkload twoInLine(java.util.function.BiFunction<String, Integer, JobRequest> jobs, int backlog) {
        return FriendsWorkload.on().seededBy(db -> {
            seedLogs(db, "k");
            queue(db).build().ensureIndexes();
        }).operation((db, ignored, random) -> {
            JobQueue queue = queue(db).maxKeyBacklog(backlog).build();
            queue.enqueue(jobs.apply("k", 1));
            queue.enqueue(jobs.apply("k", 2));
            queue.processNext();
            queue.processNext();
        }).recoveredBy(db -> queue(db).maxKeyBacklog(backlog).build().recover(Duration.ZERO))
                .checkedBy(OrderingKeysTest::inOrder);
    }

    /**
     * The log shows each job's effect once, in the order they were enqueued (a job a pruner removed may have left
     * its effect), and every job still recorded among them; every job done; no line left.
     */
    static List<String> inOrder(MongoDatabase db) {
        List<String> problems = new ArrayList<>();
        List<Object> seen = seen(db, "k");
        for (int i = 1; i < seen.size(); i++) {
            if (((Integer) seen.get(i)) <= ((Integer) seen.get(i - 1))) {
                problems.add("the log of key k is " + seen + ": out of order, or a job ran twice");
            }
        }
        for (Document job : db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find()) {
            if (!(job.get("payload") instanceof Document payload)) {
                continue;   // compacted past its retention while its writer still holds it: pruned, in effect
            }
            Object n = payload.get("n");
            if (!seen.contains(n)) {
                problems.add("job " + job.get("_id") + " left no effect: the log of key k is " + seen);
            }
        }
        for (Document job : db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find()) {
            if (!"done".equals(job.getString("state"))) {
                problems.add("job " + job.get("_id") + " is " + job.getString("state"));
            }
        }
        for (Document line : db.getCollection(JobQueueConfig.DEFAULT_KEYS_COLLECTION).find()) {
            problems.add("a line is left: " + line.toJson());
        }
        return problems;
    }

    @Test
    void shouldKeepTheOrderWhenAnyWriteCrashes(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client).name("ordering-key")
                .workload(twoInLine()).recoveryFaults(true).build().explore();

        assertThat(report.sites()).extracting(s -> s.collection()).contains("jobKeys", "jobs", LOGS);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    /**
     * The same, on a line kept in several documents: every write that moves entries into a chunk, puts the chunk in
     * the line, deletes an emptied one or moves the head past it is a crash point (recovery's own crashes are
     * explored on the line of one document above). Heavy: on a real engine only when asked (docs/servers.md); the
     * interleavings of the same line run on every server.
     */
    @Tag("heavy")
    @Test
    void shouldKeepTheOrderWhenAnyWriteCrashesOnALineKeptInChunks(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client).name("ordering-key-chunks")
                .workload(twoInLine(OrderingKeysTest::step, 4)).build().explore();

        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldKeepTheOrderOfALineKeptInChunksWhateverRunsBesideIt(MongoTarget target) {
        InterleavingExplorer.Report report = actors(target, "ordering-key-chunks", twoInLine(OrderingKeysTest::step,
                4), OrderingKeysTest::step, 4).build().explore();

        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldKeepTheOrderWhateverRunsBesideIt(MongoTarget target) {
        InterleavingExplorer.Report report = actors(target, "ordering-key", twoInLine(), OrderingKeysTest::step)
                .build().explore();

        assertThat(report.schedules()).isGreaterThan(report.calls().size());
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    /** The actors of a key's line: a worker, a recoverer, a second enqueuer of the same jobs, a pruner days ahead. */
    static InterleavingExplorer.Builder actors(MongoTarget target, String name, FriendsWorkload workload,
                                               java.util.function.BiFunction<String, Integer, JobRequest> jobs) {
        return actors(target, name, workload, jobs, JobQueueConfig.DEFAULT_MAX_KEY_BACKLOG);
    }

    /** {@link #actors(MongoTarget, String, FriendsWorkload, java.util.function.BiFunction)}, lines of {@code backlog}. */
    static InterleavingExplorer.Builder actors(MongoTarget target, String name, FriendsWorkload workload,
                                               java.util.function.BiFunction<String, Integer, JobRequest> jobs,
                                               int backlog) {
        return InterleavingExplorer.builder(target).name(name).workload(workload)
                .actor("worker", db -> {
                    queue(db).maxKeyBacklog(backlog).build().processNext();
                    return List.of();
                })
                .actor("recoverer", db -> {
                    queue(db).maxKeyBacklog(backlog).build().recover(Duration.ZERO);
                    return List.of();
                })
                .actor("second enqueuer", db -> {
                    JobQueue queue = queue(db).maxKeyBacklog(backlog).build();
                    queue.enqueue(jobs.apply("k", 1));
                    queue.enqueue(jobs.apply("k", 2));
                    return List.of();
                })
                .actor("pruner days ahead", db -> {
                    queue(db).retention(Duration.ofDays(1)).serverClock(ServerClock.unsynchronized(Clock.offset(
                            Clock.systemUTC(), Duration.ofDays(3)))).build().prune();
                    return List.of();
                });
    }
    /**
     * Enqueueing on a key costs what it uses, not the key's backlog: with 2,000 jobs and more waiting on one ordering
     * key, the bytes the server sends back per enqueue (over 100 enqueues, so that a chunk's move is counted with the
     * joins it serves) stay within 1.5x of those of enqueues on an empty line and behind one job, and a completion
     * reads the head's chunk at most; no document of the line holds more than a chunk. Counted from the driver's
     * replies: no clock.
     */
    @Test
    void shouldReadOnlyTheHeadOfALineWhateverTheKeysBacklog(MongoDatabase db) {
        java.util.concurrent.atomic.AtomicLong replyBytes = new java.util.concurrent.atomic.AtomicLong();
        com.mongodb.MongoClientSettings settings = com.mongodb.MongoClientSettings.builder()
                .applyConnectionString(dev.consistencykit.testkit.MongoTarget.fromEnvironment().connectionString())
                .addCommandListener(new com.mongodb.event.CommandListener() {
                    @Override
                    public void commandSucceeded(com.mongodb.event.CommandSucceededEvent event) {
                        replyBytes.addAndGet(new org.bson.RawBsonDocument(event.getResponse(),
                                new org.bson.codecs.BsonDocumentCodec()).getByteBuffer().remaining());
                    }
                }).build();
        try (com.mongodb.client.MongoClient counted = com.mongodb.client.MongoClients.create(settings)) {
            JobQueue queue = queue(counted.getDatabase(db.getName())).build();
            queue.ensureIndexes();
            int rounds = 100;
            db.getCollection(LOGS).insertOne(new Document("_id", "a"));
            int backlog = 2_000;
            for (int n = 0; n < backlog; n++) {
                queue.enqueue(step("a", n));
            }
            replyBytes.set(0);
            for (int n = backlog; n < backlog + rounds; n++) {
                queue.enqueue(step("a", n));
            }
            long longLine = replyBytes.get() / rounds;
            for (Document d : db.getCollection(JobQueueConfig.DEFAULT_KEYS_COLLECTION).find()) {
                assertThat(d.getList("line", Object.class)).as("entries on %s", d.get("_id"))
                        .hasSizeLessThanOrEqualTo(100);
            }
            replyBytes.set(0);
            assertThat(queue.processNext()).isPresent();   // the head runs; the next one's turn comes
            assertThat(replyBytes.get()).as("reply bytes of a completion on a line of 2,100").isLessThan(20_000);

            for (int k = 0; k < rounds; k++) {
                db.getCollection(LOGS).insertOne(new Document("_id", "s" + k));
            }
            replyBytes.set(0);
            for (int k = 0; k < rounds; k++) {
                queue.enqueue(step("s" + k, 0));   // on an empty line: the head of its key, it waits for a worker
            }
            long emptyLine = replyBytes.get() / rounds;
            replyBytes.set(0);
            for (int k = 0; k < rounds; k++) {
                queue.enqueue(step("s" + k, 1));
            }
            long shortLine = replyBytes.get() / rounds;
            assertThat(longLine).as("reply bytes per enqueue behind 2,000 jobs and more, against %d on an empty line and"
                    + " %d behind one", emptyLine, shortLine).isLessThanOrEqualTo(Math.min(emptyLine, shortLine) * 3 / 2);
        }
    }
}
