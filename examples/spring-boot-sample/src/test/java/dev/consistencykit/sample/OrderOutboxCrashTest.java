package dev.consistencykit.sample;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.bson.Document;
import org.junit.jupiter.api.Test;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;

import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.Workload;

/**
 * The sample's order placement crashed at each of its writes (before, after with the reply lost, a transient error, a
 * paused caller), then recovered as the service's maintenance does: exactly one shipping job per order, run once.
 */
class OrderOutboxCrashTest {

    /** The shipping queue as the service's properties make it. */
    static JobQueue shipping(MongoDatabase db) {
        return JobQueue.builder(db).name("shipping").collection("shipping").handler(ShipOrder.TYPE, new ShipOrder())
                .build();
    }

    /** One order placed by the service's code, then one job run; the service's maintenance as recovery. */
    static final class PlaceOrder implements Workload {

        @Override
        public void seed(MongoDatabase database) {
            database.getCollection("dispatch").updateOne(eq("_id", "today"), Updates.setOnInsert("parcels", 0),
                    new UpdateOptions().upsert(true));
            shipping(database).ensureIndexes();
            JobQueue.ensureOutboxIndex(database.getCollection(Orders.COLLECTION));
        }

        @Override
        public void operate(MongoDatabase database, Random random) {
            JobQueue queue = shipping(database);
            new Orders(queue, database.getCollection(Orders.COLLECTION, Order.class))
                    .place(Order.placed("o1", "book", 3));
            queue.processNext();
        }

        @Override
        public void recover(MongoDatabase database) {
            JobQueue queue = shipping(database);
            queue.relayOutbox(database.getCollection(Orders.COLLECTION), Duration.ZERO);
            queue.recover(Duration.ZERO);
        }

        /** The order there with exactly one job, done, its effects once; or neither. Nothing of the outbox left. */
        @Override
        public List<String> invariants(MongoDatabase database) {
            List<String> problems = new ArrayList<>();
            Document order = database.getCollection(Orders.COLLECTION).find(eq("_id", "o1")).first();
            List<Document> jobs = database.getCollection("shipping").find().into(new ArrayList<>());
            int parcels = database.getCollection("dispatch").find(eq("_id", "today")).first().getInteger("parcels");
            if (order == null) {
                if (!jobs.isEmpty() || parcels != 0) {
                    problems.add("no order, yet jobs " + jobs + " and " + parcels + " parcels");
                }
                return problems;
            }
            if (jobs.size() != 1 || !"done".equals(jobs.get(0).getString("state"))) {
                problems.add("order o1 has jobs " + jobs);
            }
            if (!"shipped".equals(order.getString("status")) || parcels != 3) {
                problems.add("order " + order.toJson() + " with " + parcels + " parcels dispatched");
            }
            if (!order.keySet().equals(java.util.Set.of("_id", "item", "quantity", "status"))) {
                problems.add("the order carries more than its fields: " + order.toJson());
            }
            return problems;
        }

        @Override
        public String toString() {
            return "place order";
        }
    }

    @Test
    void shouldLeaveExactlyOneJobPerOrderWhenThePlacementCrashesAtAnyWrite() {
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(MongoTarget.fromEnvironment()
                        .client())
                .name("sample-order")
                .workload(new PlaceOrder())
                .recoveryFaults(true)
                .build().explore();

        assertThat(report.sites()).extracting(s -> s.method() + " " + s.collection()).startsWith(
                "insertOne orders", "updateOne shipping", "updateOne shipping", "updateOne orders");
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }
}
