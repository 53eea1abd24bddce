package dev.consistencykit.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;

import org.bson.Document;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

import com.mongodb.WriteConcern;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

class InputsTest {

    @Test
    void shouldAcceptAnIdUpToTheLimitInUtf8BytesAndRefuseOneByteMore() {
        String atLimit = "\u00e9".repeat(Inputs.MAX_ID_BYTES / 2);
        assertThat(Inputs.operationId("x", "id", atLimit)).isEqualTo(atLimit);
        assertThat(Inputs.documentId("x", "id", atLimit)).isEqualTo(atLimit);

        assertThatThrownBy(() -> Inputs.operationId("x", "id", atLimit + "a")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("1025 bytes").hasMessageContaining("1024");
        assertThatThrownBy(() -> Inputs.documentId("x", "id", atLimit + "a"))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> Inputs.documentId("x", "id", new Document("k", "v".repeat(Inputs.MAX_ID_BYTES))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("an id must stay within");
    }

    @Test
    void shouldAcceptStringsIntegralNumbersAndObjectIdsAsDocumentIds() {
        ObjectId oid = new ObjectId();
        assertThat(Inputs.documentId("s", "id", "acct-1")).isEqualTo("acct-1");
        assertThat(Inputs.documentId("s", "id", 42L)).isEqualTo(42L);
        assertThat(Inputs.documentId("s", "id", 7)).isEqualTo(7);
        assertThat(Inputs.documentId("s", "id", oid)).isEqualTo(oid);
    }

    @Test
    void shouldRejectDocumentIdThatCouldCarryAnOperator() {
        assertThatThrownBy(() -> Inputs.documentId("payments", "from", new Document("$gt", "")))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("[payments]")
                .hasMessageContaining("key '$gt' in from must not start with '$'")
                .hasMessageContaining("$gt")
                .extracting(e -> ((InvalidInputException) e).field()).isEqualTo("from");
        assertThatThrownBy(() -> Inputs.documentId("s", "id", Map.of("$ne", 1)))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> Inputs.documentId("s", "id", List.of("a")))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> Inputs.documentId("s", "id", Double.NaN)).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> Inputs.documentId("s", "id", Filters.eq("x", 1)))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> Inputs.documentId("s", "id", Filters.eq("x", new Document("a", 1))))
                .isInstanceOf(InvalidInputException.class);
    }

    @Test
    void shouldRejectNullAndBlankIds() {
        assertThatThrownBy(() -> Inputs.documentId("s", "to", null)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("to must not be null");
        assertThatThrownBy(() -> Inputs.documentId("s", "to", "  ")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("to must not be blank");
    }

    @Test
    void shouldRejectFieldNamesStartingWithDollarOrContainingDot() {
        assertThat(Inputs.fieldName("s", "field", "balance")).isEqualTo("balance");
        assertThatThrownBy(() -> Inputs.fieldName("s", "field", "$where")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("must not start with '$'").hasMessageContaining("'$where'");
        assertThatThrownBy(() -> Inputs.fieldName("s", "field", "a.b")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("must not contain '.'");
        assertThatThrownBy(() -> Inputs.fieldName("s", "field", "")).isInstanceOf(InvalidInputException.class);
    }

    @Test
    void shouldAcceptDottedPathsOfPlainNamesOnly() {
        assertThat(Inputs.fieldPath("s", "path", "author.name")).isEqualTo("author.name");
        assertThatThrownBy(() -> Inputs.fieldPath("s", "path", "author.$name"))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> Inputs.fieldPath("s", "path", "author..name"))
                .isInstanceOf(InvalidInputException.class);
    }

    @Test
    void shouldRejectOperatorKeysAtAnyDepthOfDataDocument() {
        Inputs.plainDocument("s", "payload", new Document("a", new Document("b", List.of(new Document("c", 1)))));

        assertThatThrownBy(() -> Inputs.plainDocument("s", "payload",
                new Document("a", new Document("b", List.of(new Document("$set", 1))))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("'$set'")
                .hasMessageContaining("payload.a.b[0]");
        assertThatThrownBy(() -> Inputs.plainDocument("s", "payload", new Document("x.y", 1)))
                .isInstanceOf(InvalidInputException.class);
    }

    @Test
    void shouldRejectUpdateSpecThatMixesOperatorsAndPlainFields() {
        assertThat(Inputs.updateSpec("s", "update", Updates.inc("balance", 5)).containsKey("$inc")).isTrue();

        assertThatThrownBy(() -> Inputs.updateSpec("s", "update",
                new Document("$inc", new Document("balance", 5)).append("name", "x")))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("mixes operators and plain fields");
        assertThatThrownBy(() -> Inputs.updateSpec("s", "update", new Document("name", "x")))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("replacement");
        assertThatThrownBy(() -> Inputs.updateSpec("s", "update", new Document()))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("must not be empty");
    }

    @Test
    void shouldRejectNonPositiveAmounts() {
        assertThat(Inputs.positive("s", "amount", 1)).isEqualTo(1);
        assertThatThrownBy(() -> Inputs.positive("s", "amount", 0)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("amount must be > 0, was 0");
        assertThatThrownBy(() -> Inputs.positive("s", "amount", -5)).isInstanceOf(InvalidInputException.class);
    }

    @Test
    void shouldRefuseUnacknowledgedWriteConcern() {
        assertThat(Inputs.acknowledged("s", WriteConcern.MAJORITY)).isEqualTo(WriteConcern.MAJORITY);
        assertThatThrownBy(() -> Inputs.acknowledged("payments", WriteConcern.UNACKNOWLEDGED))
                .isInstanceOf(UnsafeConfigurationException.class)
                .hasMessageContaining("[payments]")
                .hasMessageContaining("w:0");
    }

    @Test
    void shouldNormaliseSmallIntegersWhenBuildingOperationId() {
        assertThat(new OperationId(7)).isEqualTo(OperationId.of(7L));
        assertThat(OperationId.random()).isNotEqualTo(OperationId.random());
        assertThatThrownBy(() -> new OperationId(new Document("$gt", 1))).isInstanceOf(InvalidInputException.class);
    }
}
