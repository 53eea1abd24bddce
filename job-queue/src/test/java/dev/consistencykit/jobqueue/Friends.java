package dev.consistencykit.jobqueue;

import static com.mongodb.client.model.Filters.eq;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.spi.RecordReleases;

/** The workloads of the tests: "A and B become friends", and counters, both idempotent per job. */
final class Friends {

    static final String USERS = "users";
    /**
     * The ids of the jobs whose effect a document received, pushed by the handlers in the same write as the effect:
     * the test's own record of each effect, kept for ever, unlike the queue's marks, which leave with the job.
     */
    static final String WITNESS = "effectOf";
    static final String COUNTERS = "counters";
    static final RetryPolicy FAST_RETRY = RetryPolicy.DEFAULT.withBackoff(Duration.ofMillis(1), Duration.ofMillis(4));
    /** The states a worker claims a job in. */
    private static final List<String> CLAIMABLE = List.of("todo", "failed");

    private Friends() {
    }

    static JobQueue.Builder queue(MongoDatabase db) {
        return JobQueue.builder(db).retryPolicy(FAST_RETRY).retryBackoff(Duration.ofMillis(1), Duration.ofMillis(5))
                .handler("befriend", ctx -> {
                    Document p = ctx.payload();
                    // a missing user fails the attempt (EffectTargetMissingException)
                    ctx.applyOnce(USERS, p.get("a"), Updates.combine(Updates.push("friends", p.get("b")),
                            Updates.push(WITNESS, ctx.id().value())));
                    ctx.applyOnce(USERS, p.get("b"), Updates.combine(Updates.push("friends", p.get("a")),
                            Updates.push(WITNESS, ctx.id().value())));
                })
                .handler("count", ctx -> ctx.applyOnce(COUNTERS, ctx.payload().get("counter"),
                        Updates.combine(Updates.inc("n", 1L), Updates.push(WITNESS, ctx.id().value()))));
    }

    /** A queue whose server clock is two days ahead of a one-day retention: to it, every done job is past retention. */
    static JobQueue prunerDaysAhead(MongoDatabase db) {
        return queue(db).retention(Duration.ofDays(1)).serverClock(dev.consistencykit.core.ServerClock.unsynchronized(
                java.time.Clock.offset(java.time.Clock.systemUTC(), Duration.ofDays(2)))).build();
    }

    static void seedUsers(MongoDatabase db, String... names) {
        List<Document> docs = new ArrayList<>();
        for (String n : names) {
            docs.add(new Document("_id", n).append("friends", List.of()));
        }
        db.getCollection(USERS).insertMany(docs);
    }

    static void seedCounters(MongoDatabase db, int n) {
        List<Document> docs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            docs.add(new Document("_id", "c" + i).append("n", 0L));
        }
        db.getCollection(COUNTERS).insertMany(docs);
    }

    static JobRequest befriend(String a, String b) {
        return JobRequest.of("befriend", new Document("a", a).append("b", b));
    }

    /**
     * Each job whose {@code claimAt} disagrees with its state and run-at time: the claim reads {@code claimAt}, which
     * only a job a worker may claim holds ({@code ClaimableJobsTest}).
     */
    static List<String> claimAtProblems(MongoDatabase db) {
        List<String> problems = new ArrayList<>();
        for (Document job : db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find()) {
            boolean claimable = CLAIMABLE.contains(job.get("state"));
            if (claimable != job.containsKey("claimAt")
                    || (claimable && !Objects.equals(job.get("claimAt"), job.get("runAt")))) {
                problems.add("job " + job.get("_id") + " is " + job.get("state") + ", due at " + job.get("runAt")
                        + ", with claimAt " + (job.containsKey("claimAt") ? job.get("claimAt") : "absent"));
            }
        }
        return problems;
    }

    /**
     * Every job terminal (none lost, none stuck); every done befriend job's friendship present on both sides; every
     * user's friends exactly the effects of the jobs it records, each once; every counter equal to the number of jobs whose effect it records, and at least the number of
     * done jobs that target it; no document still carrying a mark or a reservation of a job that is done.
     */
    static List<String> invariants(MongoDatabase db) {
        List<String> problems = new ArrayList<>(claimAtProblems(db));
        for (Document job : db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find()) {
            String state = job.getString("state");
            if (!JobState.fromStored(state).isTerminal()) {
                problems.add("job " + job.get("_id") + " not terminal: " + state);
            }
            Document p = job.get("payload", Document.class);
            if (job.containsKey(RecordReleases.COMPACTED)) {
                continue;   // past its retention and still held by its writer: as good as pruned, only evidence left
            }
            if ("done".equals(state) && "befriend".equals(job.getString("type"))) {
                for (String[] pair : new String[][] {{p.getString("a"), p.getString("b")},
                        {p.getString("b"), p.getString("a")}}) {
                    Document user = db.getCollection(USERS).find(eq("_id", pair[0])).first();
                    if (user == null || !user.getList("friends", String.class).contains(pair[1])) {
                        problems.add("done job " + job.get("_id") + ": " + pair[0] + " is not friends with " + pair[1]);
                    }
                }
            }
            if ("done".equals(state) && "count".equals(job.getString("type"))) {
                Document counter = db.getCollection(COUNTERS).find(eq("_id", p.get("counter"))).first();
                if (counter == null || !counter.getList(WITNESS, Object.class, List.of()).contains(job.get("_id"))) {
                    problems.add("done job " + job.get("_id") + " left no effect on " + p.get("counter"));
                }
            }
        }
        Map<Object, Document> jobs = new HashMap<>();
        db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find().forEach(j -> jobs.put(j.get("_id"), j));
        for (Document user : db.getCollection(USERS).find()) {
            // each friend entry must come from exactly one job whose marker the user carries
            List<String> expected = new ArrayList<>();
            List<Object> applied = user.getList(WITNESS, Object.class, List.of());
            if (applied.size() != applied.stream().distinct().count()) {
                problems.add(user.get("_id") + " records a job's effect twice: " + applied);
            }
            for (Object id : applied) {
                Document p = jobs.get(id).get("payload", Document.class);
                expected.add(user.get("_id").equals(p.get("a")) ? p.getString("b") : p.getString("a"));
            }
            List<String> friends = new ArrayList<>(user.getList("friends", String.class, List.of()));
            Collections.sort(friends);
            Collections.sort(expected);
            if (!friends.equals(expected)) {
                problems.add(user.get("_id") + " has friends " + friends + " but its applied jobs say " + expected);
            }
        }
        for (Document counter : db.getCollection(COUNTERS).find()) {
            List<Object> applied = counter.getList(WITNESS, Object.class, List.of());
            long n = counter.getLong("n");
            if (n != applied.size() || applied.size() != applied.stream().distinct().count()) {
                problems.add("counter " + counter.get("_id") + " is " + n + " but records effects of " + applied);
            }
        }
        for (String collection : List.of(USERS, COUNTERS)) {
            for (Document d : db.getCollection(collection).find()) {
                List<Object> marks = new ArrayList<>(d.getList("appliedJobs", Object.class, List.of()));
                for (Object r : d.getList("reservedJobs", Object.class, List.of())) {
                    marks.add(((Document) r).get("o"));
                }
                for (Object id : marks) {
                    Document job = jobs.get(id);
                    if (job == null || "done".equals(job.getString("state"))) {
                        problems.add(collection + "/" + d.get("_id") + " still carries a mark of done job " + id);
                    }
                }
            }
        }
        return problems;
    }
}
