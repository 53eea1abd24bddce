package dev.consistencykit.twophase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** Ids are equal as MongoDB holds them equal: never by their Java type, never by how they print. */
@ExtendWith(MongoTestExtension.class)
class IdIdentityTest {

    @Test
    void shouldKeepTwoDocumentsWhoseIdsOnlyPrintAlikeApartEverywhere(MongoDatabase db) {
        db.getCollection("accounts").insertMany(List.of(new Document("_id", "1").append("balance", 100L),
                new Document("_id", 1).append("balance", 100L)));
        TwoPhaseCommit payments = TwoPhaseCommit.builder(db).build();

        assertThat(payments.transfer(Transfer.of(OperationId.of("t1"), "1", 1L, 30)).isCommitted()).isTrue();

        Map<Object, Long> effects = payments.audit("balance").committedEffectsOn("accounts");
        assertThat(effects.get("1")).isEqualTo(-30L);
        assertThat(effects.get(1)).isEqualTo(30L);
        assertThat(effects.get(1L)).isEqualTo(30L);
        assertThat(effects.get(1.0)).isEqualTo(30L);
        assertThat(payments.readSettled("accounts", List.of(1L, "1"), java.time.Duration.ofSeconds(5)).documents())
                .extracting(d -> d.get("balance")).containsExactly(130L, 70L);
    }

    @Test
    void shouldFindADocumentByAnIdOfAnotherNumericTypeWithTheSameValue(MongoDatabase db) {
        db.getCollection("accounts").insertMany(List.of(new Document("_id", 1).append("balance", 100L),
                new Document("_id", 2L).append("balance", 100L)));
        TwoPhaseCommit payments = TwoPhaseCommit.builder(db).build();

        assertThat(payments.transfer(Transfer.of(OperationId.of("t1"), 1.0, 2.0, 30)).isCommitted()).isTrue();
        assertThat(payments.transfer(Transfer.of(OperationId.of("t2"), new org.bson.types.Decimal128(2), 1L, 5))
                .isCommitted()).isTrue();

        assertThat(payments.readConsistent("accounts", List.of(1, 2)).documents())
                .extracting(d -> d.get("balance")).containsExactly(75L, 125L);
    }

    @Test
    void shouldTreatIdsMongoDbHoldsEqualAsOneDocument(MongoDatabase db) {
        db.getCollection("accounts").insertOne(new Document("_id", 7).append("balance", 100L));
        TwoPhaseCommit payments = TwoPhaseCommit.builder(db).build();

        assertThatThrownBy(() -> payments.transfer(Transfer.of(OperationId.of("t1"), 7, 7.0, 1)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("to must differ from from");
        assertThatThrownBy(() -> payments.apply(TwoPhaseTransaction.of(OperationId.of("t2"),
                Participant.on("accounts", 7), Participant.on("accounts", 7L))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("a second time");
    }
}
