package dev.consistencykit.syncflag;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Date;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.testkit.DatabaseSnapshot;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** A document handed to {@code readRepair} is input: no operator in it may reach the server. */
@ExtendWith(MongoTestExtension.class)
class InjectionTest {

    @Test
    void shouldRefuseOperatorsInTheDocumentGivenToReadRepairAndChangeNothing(MongoDatabase db) {
        Blog.seed(db, 2, 1);
        // u1 is flagged: its rename is half propagated
        db.getCollection(Blog.USERS).updateOne(eq("_id", "u1"), Updates.combine(Updates.set("name", "Bee"),
                Updates.set("syncing", new Document("op", "op-1").append("at", new Date(0)))));
        DatabaseSnapshot before = DatabaseSnapshot.of(db);
        Document hostile = new Document("_id", new Document("$ne", "u0")).append("syncing",
                new Document("op", new Document("$exists", true)).append("at", new Date(Long.MAX_VALUE / 2)));

        assertThatThrownBy(() -> Blog.sync(db).build().readRepair(hostile))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("master._id");
        Document opOnly = new Document("_id", "u1").append("syncing",
                new Document("op", new Document("$exists", true)).append("at", new Date(Long.MAX_VALUE / 2)));
        assertThatThrownBy(() -> Blog.sync(db).build().readRepair(opOnly))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("syncing.op");

        assertThat(DatabaseSnapshot.of(db)).isEqualTo(before);
    }

    @Test
    void shouldRepairWhenTheDocumentIsTheMasterAsRead(MongoDatabase db) {
        Blog.seed(db, 2, 1);
        db.getCollection(Blog.USERS).updateOne(eq("_id", "u1"), Updates.combine(Updates.set("name", "Bee"),
                Updates.set("syncing", new Document("op", "op-1").append("at", new Date(0)))));
        Document master = db.getCollection(Blog.USERS).find(eq("_id", "u1")).first();

        assertThat(Blog.sync(db).build().readRepair(master)).isTrue();

        assertThat(Blog.invariants(db)).isEmpty();
    }
}
