package dev.consistencykit.examples.samples;

import java.time.Duration;
import java.util.List;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.jobqueue.JobWorkers;

/** The README's job-queue sample. */
public final class JobQueueSample {

    private JobQueueSample() {
    }

    /** Three users. */
    public static void seed(MongoDatabase db) {
        db.getCollection("users").insertMany(List.of(new Document("_id", "ann").append("friends", List.of()),
                new Document("_id", "bob").append("friends", List.of()),
                new Document("_id", "cid").append("friends", List.of())));
    }

    /** Runs the sample on {@code db}. */
    public static void run(MongoDatabase db) {
        // README:start
        JobQueue queue = JobQueue.builder(db)
                .handler("befriend", ctx -> {                       // effects applied once per job, however often it runs
                    Document p = ctx.payload();
                    ctx.applyOnce("users", p.get("a"), Updates.push("friends", p.get("b")));
                    ctx.applyOnce("users", p.get("b"), Updates.push("friends", p.get("a")));
                }).build();
        queue.ensureIndexes();
        queue.enqueue(JobRequest.of("befriend", new Document("a", "ann").append("b", "bob")).withDedupeKey("ann+bob"));
        queue.enqueueWith(db.getCollection("users"), "ann", null, Updates.set("status", "social"),  // atomic with your
                JobRequest.of("befriend", new Document("a", "ann").append("b", "cid")));              // own write (outbox)
        queue.relayOutbox(db.getCollection("users"));   // moves outbox entries to the queue (maintenance does it too)
        while (queue.processNext().isPresent()) { }     // or, in a service: try (JobWorkers w = queue.startWorkers(4)) {…}
        queue.recover(Duration.ofMinutes(1));           // requeue jobs whose worker died
        // README:end
        try (JobWorkers workers = queue.startWorkers(1)) {
            Samples.check(workers.health() != null, "a pool reports its health");
        }
        Document ann = db.getCollection("users").find(new Document("_id", "ann")).first();
        Samples.check(ann.getList("friends", String.class).containsAll(List.of("bob", "cid")),
                "ann befriended bob and cid once each: " + ann);
    }
}
