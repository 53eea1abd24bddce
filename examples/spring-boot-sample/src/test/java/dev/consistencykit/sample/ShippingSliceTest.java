package dev.consistencykit.sample;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.mongodb.autoconfigure.MongoConnectionDetails;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

import com.mongodb.ConnectionString;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.spring.ConsistencyKitDatabase;
import dev.consistencykit.spring.test.ConsistencyKitTest;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;

/**
 * The application's own slice test, as a team writes one: its instances and handlers, no web server, on the embedded
 * server, or on the server {@code MONGODB_URI} names (this project's CI runs it on the real engine that way).
 */
@ConsistencyKitTest(properties = {"consistency-kit.job-queue.shipping.workers=0",
        "consistency-kit.database=slice_test"})
@Import(ShippingSliceTest.ServerFromEnvironment.class)
class ShippingSliceTest {

    /** A real server when the environment names one: a {@code MongoConnectionDetails}, as Testcontainers gives. */
    @TestConfiguration(proxyBeanMethods = false)
    static class ServerFromEnvironment {

        @Bean
        @ConditionalOnProperty("MONGODB_URI")
        MongoConnectionDetails realServer(org.springframework.core.env.Environment environment) {
            ConnectionString uri = new ConnectionString(environment.getProperty("MONGODB_URI"));
            return () -> uri;
        }
    }

    @Autowired
    JobQueue shipping;

    @Autowired
    TwoPhaseCommit payments;

    @Autowired
    ConsistencyKitDatabase database;

    @Test
    void shouldShipAnOrderOnceAndMoveMoney() {
        var db = database.database();
        db.drop();
        db.getCollection("dispatch").insertOne(new Document("_id", "today").append("parcels", 0));
        db.getCollection(Orders.COLLECTION).insertOne(new Document("_id", "o1").append("item", "pen")
                .append("quantity", 3).append("status", "placed"));
        shipping.ensureIndexes();
        payments.ensureIndexes();

        shipping.enqueue(JobRequest.of(ShipOrder.TYPE, new Shipment("o1", 3))
                .withId(OperationId.of("ship-o1")));
        assertThat(shipping.processNext()).hasValueSatisfying(r -> assertThat(r.isCommitted()).as(r.toString())
                .isTrue());
        assertThat(db.getCollection("dispatch").find(eq("_id", "today")).first().getInteger("parcels")).isEqualTo(3);

        db.getCollection("accounts").insertMany(java.util.List.of(new Document("_id", "a").append("balance", 10L),
                new Document("_id", "b").append("balance", 0L)));
        assertThat(payments.transfer(Transfer.of(OperationId.of("t1"), "a", "b", 4)).isCommitted()).isTrue();
        assertThat(db.getCollection("accounts").find(eq("_id", "b")).first().getLong("balance")).isEqualTo(4L);
        db.drop();
    }
}
