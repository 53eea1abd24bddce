package dev.consistencykit.jobqueue;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** Payloads that are the application's own records, encoded and decoded with the database's codec registry. */
@ExtendWith(MongoTestExtension.class)
class TypedPayloadTest {

    /** A shipment, as the application's code knows it. */
    public record Shipment(String order, int parcels, java.time.Instant packedAt) {
    }

    /** Another record, that a shipment's payload is not. */
    public record Refund(String order, long cents) {
    }

    @Test
    void shouldHandTheHandlerTheRecordItWasEnqueuedAs(MongoDatabase db) {
        List<Shipment> seen = new ArrayList<>();
        JobQueue queue = Friends.queue(db).handler("ship", ctx -> seen.add(ctx.payload(Shipment.class))).build();
        Shipment shipment = new Shipment("o1", 2, java.time.Instant.parse("2026-11-25T10:00:00Z"));

        queue.enqueue(JobRequest.of("ship", shipment).withId(OperationId.of("s1")));
        queue.enqueue(JobRequest.of("ship", new Shipment("o1", 2, shipment.packedAt())).withId(OperationId.of("s1")));
        queue.processNext();

        assertThat(seen).containsExactly(shipment);
        Document stored = db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("_id", "s1")).first();
        assertThat(stored.get("payload", Document.class)).as("stored as plain fields")
                .containsEntry("order", "o1").containsEntry("parcels", 2);
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments()).as("idempotent by content")
                .isEqualTo(1);
    }

    @Test
    void shouldFailTheAttemptWithATypedErrorWhenThePayloadIsNotTheTypeAskedFor(MongoDatabase db) {
        List<Throwable> errors = new ArrayList<>();
        JobQueue queue = Friends.queue(db).maxAttempts(1).handler("refund", ctx -> {
            try {
                ctx.payload(Refund.class);
            } catch (InvalidInputException e) {
                errors.add(e);
                throw e;
            }
        }).build();

        queue.enqueue(JobRequest.of("refund", new Document("order", "o1").append("cents", "ten")));
        queue.processNext();

        assertThat(errors).singleElement().asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.THROWABLE)
                .hasMessageContaining(Refund.class.getName());
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find().first().getString("state"))
                .isEqualTo("dead");
    }

    @Test
    void shouldRefuseAPayloadTheRegistryCannotEncodeBeforeAnyWrite(MongoDatabase db) {
        JobQueue queue = Friends.queue(db).build();

        assertThatThrownBy(() -> queue.enqueue(JobRequest.of("ship", new Object())))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> queue.enqueue(JobRequest.of("ship", "not a document")))
                .isInstanceOf(InvalidInputException.class);
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments()).isZero();
    }
}
