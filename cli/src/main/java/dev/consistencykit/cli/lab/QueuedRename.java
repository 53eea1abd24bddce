package dev.consistencykit.cli.lab;

import static com.mongodb.client.model.Filters.eq;
import static dev.consistencykit.cli.lab.ContenderWorkloads.QUEUE_HAS_NO_CONSISTENT_READ;
import static dev.consistencykit.cli.lab.ContenderWorkloads.RENAMED_USERS;
import static dev.consistencykit.cli.lab.ContenderWorkloads.copiesMatchMaster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;

/**
 * A rename job: it sets the master's name and version once (its marker), then copies the master's current name and
 * version to every comment whose copy is older, so two renames processed out of order never leave the older name.
 */
final class QueuedRename implements Contender {

    private final AtomicLong renames = new AtomicLong();

    private static JobQueue queue(MongoDatabase db) {
        return JobQueue.builder(db).retryPolicy(PatternLab.FAST_RETRY).maxAttempts(50)
                .retryBackoff(Duration.ofMillis(1), Duration.ofMillis(5))
                .handler("rename", ctx -> {
                    Object user = ctx.payload().get("user");
                    ctx.applyOnce("users", user, Updates.combine(Updates.set("name", ctx.payload().get("name")),
                            Updates.inc("nameVersion", 1L)));
                    Document master = db.getCollection("users").find(eq("_id", user)).first();
                    long version = master.getLong("nameVersion");
                    db.getCollection("comments").updateMany(Filters.and(eq("authorId", user),
                            Filters.or(Filters.exists("nameVersion", false), Filters.lt("nameVersion", version))),
                            Updates.combine(Updates.set("authorName", master.getString("name")),
                                    Updates.set("nameVersion", version)));
                }).build();
    }

    @Override
    public String name() {
        return "job queue (rename job)";
    }

    @Override
    public String pattern() {
        return "job-queue";
    }

    @Override
    public String workload() {
        return "rename";
    }

    @Override
    public void setup(MongoDatabase db) {
        SyncFlagLab.seed(db, RENAMED_USERS, 5);
        db.getCollection("users").updateMany(new Document(), Updates.set("nameVersion", 0L));
        db.getCollection("comments").createIndex(new Document("authorId", 1));
        queue(db).ensureIndexes();
    }

    @Override
    public Instance start(MongoDatabase db) {
        JobQueue queue = queue(db);
        return new ContenderActions(random -> queue.enqueue(JobRequest.of("rename", new Document("user",
                "u" + random.nextInt(RENAMED_USERS)).append("name", "Name " + renames.incrementAndGet()))),
                () -> queue.processNext().isPresent(), queue::recover, random -> copiesMatchMaster(db, random),
                null);
    }

    @Override
    public int backgroundProcesses(int writers) {
        return writers;   // a worker pool as large as the callers, so that the queue keeps up
    }

    @Override
    public String anomalies() {
        return "the job sets the master's name, then the comments', so a raw read while it runs sees old names"
                + " on some comments.";
    }

    @Override
    public Optional<String> noConsistentRead() {
        return Optional.of(QUEUE_HAS_NO_CONSISTENT_READ);
    }

    @Override
    public List<String> invariants(MongoDatabase db) {
        List<String> problems = new ArrayList<>();
        for (Document job : db.getCollection("jobs").find()) {
            if (!"done".equals(job.getString("state"))) {
                problems.add("job " + job.get("_id") + " ended " + job.getString("state"));
            }
        }
        for (Document user : db.getCollection("users").find()) {
            long stale = db.getCollection("comments").countDocuments(Filters.and(eq("authorId", user.get("_id")),
                    Filters.ne("authorName", user.getString("name"))));
            if (stale > 0) {
                problems.add(stale + " comments of " + user.get("_id") + " do not show " + user.getString("name"));
            }
        }
        return problems;
    }
}
