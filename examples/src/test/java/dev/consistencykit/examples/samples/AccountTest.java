package dev.consistencykit.examples.samples;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.junit5.MongoTestExtension;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;

// javadoc:start testkit-junit5/src/main/java/dev/consistencykit/testkit/junit5/MongoTestExtension.java
@ExtendWith(MongoTestExtension.class)
class AccountTest {
    @Test
    void shouldDebitOnce(MongoDatabase db) {   // a fresh database, dropped after the test
        db.getCollection("accounts").insertMany(List.of(new Document("_id", "a").append("balance", 100L),
                new Document("_id", "b").append("balance", 0L)));
        TwoPhaseCommit payments = TwoPhaseCommit.on(db);
        payments.transfer(Transfer.of(OperationId.of("t-1"), "a", "b", 30));
        payments.transfer(Transfer.of(OperationId.of("t-1"), "a", "b", 30));   // the same id: applied once
        assertThat(db.getCollection("accounts").find(new Document("_id", "a")).first().getLong("balance"))
                .isEqualTo(70L);
    }
}
// javadoc:end
