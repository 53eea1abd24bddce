package dev.consistencykit.testkit;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Updates;

import dev.consistencykit.testkit.junit5.MongoTestExtension;

@ExtendWith(MongoTestExtension.class)
class RoundTripCounterTest {

    @Test
    void shouldCountCommandsAndDocumentsWrittenToItsDatabase(MongoTarget target, MongoDatabase db) {
        MongoDatabase other = target.client().getDatabase(MongoTestExtension.freshName("other"));
        try (RoundTripCounter counter = RoundTripCounter.attach(target, db.getName())) {
            db.getCollection("c").insertMany(List.of(new Document("_id", 1), new Document("_id", 2)));
            db.getCollection("c").updateOne(eq("_id", 1), Updates.set("x", 1));
            db.getCollection("c").updateOne(eq("_id", 99), Updates.set("x", 1));
            db.getCollection("c").findOneAndUpdate(eq("_id", 2), Updates.set("x", 2),
                    new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER));
            db.getCollection("c").find(eq("_id", 1)).first();
            other.getCollection("c").insertOne(new Document("_id", 1));

            RoundTripCounter.RoundTrips trips = counter.snapshot();

            assertThat(trips.commands()).isEqualTo(5);
            assertThat(trips.documentsWritten()).isEqualTo(4);
            assertThat(trips.byCommand()).containsEntry("insert", 1L).containsEntry("update", 2L)
                    .containsEntry("findAndModify", 1L).containsEntry("find", 1L);
            assertThat(trips.commandsPer(5)).isEqualTo(1.0);
        } finally {
            other.drop();
        }
    }

    @Test
    void shouldStopCountingWhenClosed(MongoTarget target, MongoDatabase db) {
        RoundTripCounter counter = RoundTripCounter.attach(target, db.getName());
        db.getCollection("c").insertOne(new Document("_id", 1));
        counter.close();
        db.getCollection("c").insertOne(new Document("_id", 2));

        assertThat(counter.snapshot().commands()).isEqualTo(1);
    }
}
