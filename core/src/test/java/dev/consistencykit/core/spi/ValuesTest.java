package dev.consistencykit.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;

import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.bson.json.JsonObject;
import org.junit.jupiter.api.Test;

import com.mongodb.client.model.Filters;

import dev.consistencykit.core.InvalidInputException;

/**
 * {@link Values}: no value, whatever its Java type, may carry an operator into a stored document; amounts are
 * positive.
 */
class ValuesTest {

    private static void refused(Document document, String where) {
        assertThatThrownBy(() -> Values.plainDocument("test", "payload", document))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining(where);
    }

    @Test
    void shouldRefuseAnOperatorCarriedByAJsonObject() {
        refused(new Document("user", new JsonObject("{\"$ne\": null}")), "payload.user");
    }

    @Test
    void shouldRefuseAnOperatorCarriedByADriverFilter() {
        refused(new Document("age", Filters.gt("x", 1)), "$gt");
    }

    @Test
    void shouldRefuseAnOperatorNestedInAnArrayOfBsonDocuments() {
        refused(new Document("items", List.of(new BsonDocument("ok", new BsonString("a")),
                new BsonDocument("$where", new BsonString("1")))), "$where");
    }

    @Test
    void shouldRefuseAnOperatorNestedInAJavaArrayOrAMap() {
        refused(new Document("items", new Object[] {Map.of("$set", 1)}), "payload");
        refused(new Document("items", List.of(Map.of("$set", 1))), "$set");
        refused(new Document("deep", Map.of("a", Map.of("b.c", 1))), "b.c");
    }

    @Test
    void shouldAcceptPlainValuesOfEveryKind() {
        Document plain = new Document("s", "x").append("n", 1).append("nested", new BsonDocument("a",
                new BsonString("b"))).append("json", new JsonObject("{\"a\": 1}")).append("list", List.of(1, "two"));

        assertThat(Values.plainDocument("test", "payload", plain)).isSameAs(plain);
    }

    @Test
    void shouldRejectOperatorKeysAtAnyDepthOfDataDocument() {
        Values.plainDocument("s", "payload", new Document("a", new Document("b", List.of(new Document("c", 1)))));

        assertThatThrownBy(() -> Values.plainDocument("s", "payload",
                new Document("a", new Document("b", List.of(new Document("$set", 1))))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("'$set'")
                .hasMessageContaining("payload.a.b[0]");
        assertThatThrownBy(() -> Values.plainDocument("s", "payload", new Document("x.y", 1)))
                .isInstanceOf(InvalidInputException.class);
    }

    @Test
    void shouldRejectNonPositiveAmounts() {
        assertThat(Values.positive("s", "amount", 1)).isEqualTo(1);
        assertThatThrownBy(() -> Values.positive("s", "amount", 0)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("amount must be > 0, was 0");
        assertThatThrownBy(() -> Values.positive("s", "amount", -5)).isInstanceOf(InvalidInputException.class);
    }

    /** An application's record. */
    public record Parcel(String id, int weight) {
    }

    @Test
    void shouldDecodeAStoredDocumentAsTheTypeAskedForWithTheRegistry() {
        org.bson.codecs.configuration.CodecRegistry registry = com.mongodb.MongoClientSettings
                .getDefaultCodecRegistry();
        BsonDocument stored = Values.plainDocument("s", "item", new Parcel("p1", 3), registry);

        assertThat(Values.decode("s", "item", new Document(stored), Parcel.class, registry))
                .isEqualTo(new Parcel("p1", 3));
        assertThat(Values.decode("s", "item", stored, Parcel.class, registry)).isEqualTo(new Parcel("p1", 3));
        Document asIs = new Document("a", 1);
        assertThat(Values.decode("s", "item", asIs, Document.class, registry)).isSameAs(asIs);
        assertThatThrownBy(() -> Values.decode("s", "item", new Document("id", "p1").append("weight", "heavy"),
                Parcel.class, registry)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining(Parcel.class.getName());
    }
}
