package dev.consistencykit.jobqueue;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.InterleavingExplorer;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * An operator's actions on live jobs, crashed at each write and raced against two workers and a recoverer: a canceled
 * job never runs and every other job runs once; whatever wins, each job's effect lands once or never, nothing is
 * lost, and a key's line is left empty. The jobs: {@code first} and {@code second} on ordering key {@code k} (so the
 * second awaits the first; for the cancel), and {@code lone} on no key; each counts on its counter.
 */
@ExtendWith(MongoTestExtension.class)
class LiveJobsExplorationTest {

    private static final List<String> KEYED = List.of("first", "second");

    private static FriendsWorkload seeded(boolean keyed) {
        return FriendsWorkload.on().seededBy(db -> {
            Friends.seedCounters(db, 1);
            JobQueue queue = Friends.queue(db).build();
            queue.ensureIndexes();
            for (String id : keyed ? KEYED : List.<String>of()) {
                queue.enqueue(JobRequest.of("count", new Document("counter", "c0")).withId(OperationId.of(id))
                        .withOrderingKey("k").withMaxAttempts(50));
            }
            queue.enqueue(JobRequest.of("count", new Document("counter", "c0")).withId(OperationId.of("lone"))
                    .withMaxAttempts(50));
        }).recoveredBy(LiveJobsExplorationTest::finishEverything).checkedBy(LiveJobsExplorationTest::onceOrNever);
    }

    /** Recovery, then workers until nothing is due: what the next process's maintenance and workers do. */
    private static void finishEverything(MongoDatabase db) {
        JobQueue queue = Friends.queue(db).build();
        queue.recover(Duration.ZERO);
        for (int i = 0; i < 10 && queue.processNext().isPresent(); i++) {
            queue.recover(Duration.ZERO);
        }
    }

    /**
     * The friends' invariants (every job terminal, each effect once, no mark left), and: a canceled job left no effect;
     * every job not canceled ran exactly once; the key's jobs ran in order; no line left.
     */
    static List<String> onceOrNever(MongoDatabase db) {
        List<String> problems = new ArrayList<>(Friends.invariants(db));
        List<Object> witnessed = db.getCollection(Friends.COUNTERS).find(eq("_id", "c0")).first()
                .getList(Friends.WITNESS, Object.class, List.of());
        for (Document job : db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find()) {
            Object id = job.get("_id");
            boolean canceled = job.containsKey("canceledBy");
            long ran = witnessed.stream().filter(id::equals).count();
            if (canceled && ran > 0) {
                problems.add("canceled job " + id + " ran " + ran + " times");
            } else if (!canceled && !id.toString().contains("/rerun/") && ran != 1) {
                problems.add("job " + id + " (" + job.get("state") + ") ran " + ran + " times");
            }
        }
        if (witnessed.contains("first") && witnessed.contains("second")
                && witnessed.indexOf("second") < witnessed.indexOf("first")) {
            problems.add("the key's jobs ran out of order: " + witnessed);
        }
        if (db.getCollection(JobQueueConfig.DEFAULT_KEYS_COLLECTION).countDocuments() > 0) {
            problems.add("a line is left: " + db.getCollection(JobQueueConfig.DEFAULT_KEYS_COLLECTION).find().first());
        }
        return problems;
    }

    /** The operator cancels the head of the key's line or the job awaiting behind it, and the lone job; a worker. */
    static FriendsWorkload cancel() {
        return seeded(true).operation((db, ignored, random) -> {
            JobQueue queue = Friends.queue(db).build();
            queue.operator().cancel(OperationId.of(random.nextBoolean() ? "first" : "second"));
            queue.operator().cancel(OperationId.of("lone"));
            drain(queue);
        });
    }

    /** The operator moves the lone job twice, a worker runs it, the operator reruns it; a worker. */
    static FriendsWorkload rescheduleAndRerun() {
        return seeded(false).operation((db, ignored, random) -> {
            JobQueue queue = Friends.queue(db).build();
            // both times past, so that a crash between the two leaves the job due (an hour on, it would wait an hour)
            queue.operator().reschedule(OperationId.of("lone"), Instant.EPOCH.plus(Duration.ofDays(1)));
            queue.operator().reschedule(OperationId.of("lone"), Instant.EPOCH);
            queue.processNext();
            queue.operator().rerun(OperationId.of("lone"));
            drain(queue);
        });
    }

    /** A worker running what is due until nothing is (the operation's own process). */
    private static void drain(JobQueue queue) {
        for (int i = 0; i < 10 && queue.processNext().isPresent(); i++) {
            // next
        }
    }

    @Test
    void shouldNeverRunACanceledJobWhenTheCancelCrashesAtAnyWrite(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client).name("live-cancel")
                .workload(cancel()).recoveryFaults(true).build().explore();

        assertThat(report.sites()).extracting(s -> s.collection()).contains("jobs");
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldRunEveryJobOnceWhenARescheduleOrARerunCrashesAtAnyWrite(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client).name("live-rerun")
                .workload(rescheduleAndRerun()).build().explore();

        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldRunEachJobOnceOrNeverWhateverRunsBesideACancel(MongoTarget target) {
        InterleavingExplorer.Report report = InterleavingExplorer.builder(target).name("live-cancel")
                .workload(cancel())
                .actor("worker", db -> {
                    Friends.queue(db).build().processNext();
                    return List.of();
                })
                .actor("second worker", db -> {
                    Friends.queue(db).build().processNext();
                    return List.of();
                })
                .actor("recoverer", db -> {
                    Friends.queue(db).build().recover(Duration.ZERO);
                    return List.of();
                })
                .actor("rerunner", db -> {
                    Friends.queue(db).build().operator().rerun(OperationId.of("lone"));
                    return List.of();
                })
                .build().explore();

        assertThat(report.violations()).as(report.toString()).isEmpty();
    }
}
