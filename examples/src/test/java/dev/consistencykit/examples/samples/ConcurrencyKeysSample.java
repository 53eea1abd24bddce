package dev.consistencykit.examples.samples;

import java.util.concurrent.atomic.AtomicInteger;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;

/** The concurrency-keys page's sample. */
public final class ConcurrencyKeysSample {

    private ConcurrencyKeysSample() {
    }

    /** Runs the sample on {@code db}. */
    public static void run(MongoDatabase db) {
        AtomicInteger exported = new AtomicInteger();
        JobQueue queue = JobQueue.builder(db).handler("export", ctx -> exported.incrementAndGet()).build();
        queue.ensureIndexes();
        // README:start
        for (String report : new String[] {"sales", "stock", "staff"}) {
            queue.enqueue(JobRequest.of("export", new Document("tenant", "acme").append("report", report))
                    .withConcurrencyKey("tenant-acme", 1));   // one export of a tenant at a time, in arrival order
        }
        // README:end
        while (queue.processNext().isPresent()) {
            Samples.check(exported.get() <= 3, "each export runs once");
        }
        Samples.check(exported.get() == 3, "every export ran: " + exported);
    }
}
