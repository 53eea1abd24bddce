package dev.consistencykit.examples.samples;

import java.util.ArrayList;
import java.util.List;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;

/** The ordering-keys page's sample. */
public final class OrderingKeysSample {

    private OrderingKeysSample() {
    }

    /** Runs the sample on {@code db}. */
    public static void run(MongoDatabase db) {
        List<String> ran = new ArrayList<>();
        JobQueue queue = JobQueue.builder(db).handler("ship", ctx -> ran.add("ship"))
                .handler("invoice", ctx -> ran.add("invoice")).build();
        queue.ensureIndexes();
        Document order = new Document("order", 42);
        // README:start
        queue.enqueue(JobRequest.of("ship", order).withOrderingKey("order-42"));
        queue.enqueue(JobRequest.of("invoice", order).withOrderingKey("order-42").withPriority(9));   // still second
        // README:end
        while (queue.processNext().isPresent()) {
            Samples.check(ran.size() <= 2, "each job runs once");
        }
        Samples.check(ran.equals(List.of("ship", "invoice")), "the jobs of a key run in order: " + ran);
    }
}
