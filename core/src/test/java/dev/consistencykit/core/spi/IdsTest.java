package dev.consistencykit.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;

import org.bson.Document;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

import com.mongodb.client.model.Filters;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;

/** {@link Ids}: the limits and the equality of ids. */
class IdsTest {

    @Test
    void shouldAcceptAnIdUpToTheLimitInUtf8BytesAndRefuseOneByteMore() {
        String atLimit = "\u00e9".repeat(Ids.MAX_ID_BYTES / 2);
        assertThat(Ids.operationId("x", "id", atLimit)).isEqualTo(atLimit);
        assertThat(Ids.documentId("x", "id", atLimit)).isEqualTo(atLimit);

        assertThatThrownBy(() -> Ids.operationId("x", "id", atLimit + "a")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("1025 bytes").hasMessageContaining("1024");
        assertThatThrownBy(() -> Ids.documentId("x", "id", atLimit + "a"))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> Ids.documentId("x", "id", new Document("k", "v".repeat(Ids.MAX_ID_BYTES))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("an id must stay within");
    }

    @Test
    void shouldAcceptStringsIntegralNumbersAndObjectIdsAsDocumentIds() {
        ObjectId oid = new ObjectId();
        assertThat(Ids.documentId("s", "id", "acct-1")).isEqualTo("acct-1");
        assertThat(Ids.documentId("s", "id", 42L)).isEqualTo(42L);
        assertThat(Ids.documentId("s", "id", 7)).isEqualTo(7);
        assertThat(Ids.documentId("s", "id", oid)).isEqualTo(oid);
    }

    @Test
    void shouldRejectDocumentIdThatCouldCarryAnOperator() {
        assertThatThrownBy(() -> Ids.documentId("payments", "from", new Document("$gt", "")))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("[payments]")
                .hasMessageContaining("key '$gt' in from must not start with '$'")
                .hasMessageContaining("$gt")
                .extracting(e -> ((InvalidInputException) e).field()).isEqualTo("from");
        assertThatThrownBy(() -> Ids.documentId("s", "id", Map.of("$ne", 1)))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> Ids.documentId("s", "id", List.of("a")))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> Ids.documentId("s", "id", Double.NaN)).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> Ids.documentId("s", "id", Filters.eq("x", 1)))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> Ids.documentId("s", "id", Filters.eq("x", new Document("a", 1))))
                .isInstanceOf(InvalidInputException.class);
    }

    @Test
    void shouldRejectNullAndBlankIds() {
        assertThatThrownBy(() -> Ids.documentId("s", "to", null)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("to must not be null");
        assertThatThrownBy(() -> Ids.documentId("s", "to", "  ")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("to must not be blank");
    }

    @Test
    void shouldNormaliseSmallIntegersWhenBuildingOperationId() {
        assertThat(new OperationId(7)).isEqualTo(OperationId.of(7L));
        assertThat(OperationId.random()).isNotEqualTo(OperationId.random());
        assertThatThrownBy(() -> new OperationId(new Document("$gt", 1))).isInstanceOf(InvalidInputException.class);
    }
    /** Ids are told apart as the server tells them: field order counts, a number's type does not. */
    @Test
    void shouldTellIdsApartAsTheServerDoesWhereJavaEqualityDoesNot() {
        Document ba = new Document("b", 2).append("a", 1);
        Document ab = new Document("a", 1).append("b", 2);
        assertThat(ba).as("Java's equality of documents ignores field order").isEqualTo(ab);

        assertThat(Ids.distinct(List.of(ba, ab, 7, 7L, 7.0, "7"), Values.NEUTRAL)).containsExactly(ba, ab, 7, "7");

        Map<Object, String> byId = Ids.idMap(Values.NEUTRAL);
        byId.put(ba, "ba");
        byId.put(ab, "ab");
        byId.put(7, "int");
        assertThat(byId).hasSize(3);
        assertThat(byId.get(new Document("b", 2).append("a", 1))).isEqualTo("ba");
        assertThat(byId.get(ab)).isEqualTo("ab");
        assertThat(byId.get(7L)).as("7 and 7L are one id").isEqualTo("int");
        assertThat(byId.keySet()).containsExactly(ba, ab, 7);
    }
}
