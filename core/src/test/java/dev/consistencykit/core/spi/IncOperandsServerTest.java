package dev.consistencykit.core.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;

import dev.consistencykit.core.ServerDatabases;

/**
 * {@link IncOperands#guard} held to the server, over a catalogue of what a field on an {@code $inc}'s or a
 * {@code $mul}'s path may hold: it holds exactly on the documents whose field is missing or a finite number and whose
 * path runs through documents only; every document it refuses is one {@link IncOperands#refusal} words, and every one
 * it lets through is one the server's own unguarded update applies to without an error (never a write error after a
 * guard passed). Where it refuses, the unguarded update is not tried: a server may refuse it (MongoDB, an array) or
 * apply it to no effect (NaN) or wrongly (the embedded server's {@code $inc} of {@code null}).
 */
@ExtendWith(ServerDatabases.class)
class IncOperandsServerTest {

    private static final List<Object> VALUES = List.of(0, -7, Integer.MAX_VALUE, 5L, Long.MIN_VALUE + 200, 1.5, -0.0,
            1e300, new Decimal128(new BigDecimal("1000.25")), Decimal128.NEGATIVE_ZERO, Double.NaN, Decimal128.NaN,
            Decimal128.NEGATIVE_NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Decimal128.POSITIVE_INFINITY,
            Decimal128.NEGATIVE_INFINITY, List.of(1, 2), List.of(), List.of(List.of(5)), List.of(new Document("v", 1)),
            "12", true, new ObjectId("650000000000000000000001"), new Document("v", 1), new Document());

    @Test
    void shouldHoldExactlyWhereTheFieldIsAFiniteNumberOrMissing(MongoDatabase db) {
        check(db, "v", false);
    }

    @Test
    void shouldRefuseAPathThroughAnArrayOrAValue(MongoDatabase db) {
        check(db, "w.v", false);
    }

    @Test
    void shouldHoldTheSameForAMultiplication(MongoDatabase db) {
        check(db, "v", true);
    }

    @Test
    void shouldHoldAnIntegralIncrementOfADecimalToBeExact(MongoDatabase db) {
        MongoCollection<Document> c = db.getCollection("decimals");
        List<String> inexact = List.of("9999999999.999999999999999999999999", "0.0000000000000000000000000000000001",
                "9999999999999999999999999999999.999", "1E+6000");
        List<String> exact = List.of("1000.25", "0.1", "999999999999999999999999999999.9", "-0", "1E+30");
        BsonDocument update = new BsonDocument("$inc", new BsonDocument("v", new org.bson.BsonInt64(100)));
        for (String v : inexact) {
            c.insertOne(new Document("_id", v).append("v", Decimal128.parse(v)));
            boolean holds;
            try {
                holds = c.countDocuments(Filters.and(Filters.eq("_id", v), IncOperands.guard(update))) == 1;
            } catch (MongoException refused) {
                holds = false;   // the embedded server refuses to evaluate the inexact sum: refused all the same
            }
            assertThat(holds).as(v + " + 100 is not exact").isFalse();
            assertThat(IncOperands.refusal(update, c.find(Filters.eq("_id", v)).first())).isPresent();
        }
        for (String v : exact) {
            c.insertOne(new Document("_id", v).append("v", Decimal128.parse(v)));
            assertThat(c.countDocuments(Filters.and(Filters.eq("_id", v), IncOperands.guard(update))))
                    .as(v + " + 100 is exact").isEqualTo(1);
            assertThat(IncOperands.refusal(update, c.find(Filters.eq("_id", v)).first())).isEmpty();
        }
    }

    private static void check(MongoDatabase db, String path, boolean multiply) {
        MongoCollection<Document> c = db.getCollection("operands");
        String top = path.contains(".") ? path.substring(0, path.indexOf('.')) : path;
        // a product past the range of a long is IncOverflow's concern for an $inc and the server's for a $mul
        List<Object> stored = new ArrayList<>(VALUES.stream().filter(v -> !multiply || !(v instanceof Long l)
                || Math.abs(l) < 1L << 62).toList());
        if (path.contains(".")) {
            // the nested field as a value of a document on the path, and the values on the path itself
            VALUES.forEach(v -> stored.add(new Document("v", v)));
            stored.add(List.of(new Document("v", 1), new Document("v", 2)));
        }
        List<Document> docs = new ArrayList<>();
        for (Object value : stored) {
            docs.add(new Document("_id", docs.size()).append(top, value));
            docs.add(new Document("_id", docs.size()));
        }
        c.insertMany(docs);
        BsonDocument update = new BsonDocument(multiply ? "$mul" : "$inc", new BsonDocument(path,
                new org.bson.BsonInt64(2)));
        Set<Object> held = new HashSet<>();
        c.find(IncOperands.guard(update)).forEach(d -> held.add(d.get("_id")));
        List<String> problems = new ArrayList<>();
        for (Document read : c.find().sort(new Document("_id", 1))) {
            boolean holds = held.contains(read.get("_id"));
            if (holds == IncOperands.refusal(update, read).isPresent()) {
                problems.add(read.toJson() + ": the guard " + (holds ? "holds" : "refuses") + ", refusal() says "
                        + IncOperands.refusal(update, read));
            }
            if (!holds && !path.contains(".") && finite(read.get(top))) {
                problems.add(read.toJson() + ": a finite number refused");
            }
            if (holds) {
                try {
                    c.updateOne(Filters.eq("_id", read.get("_id")), update);
                } catch (MongoException refused) {
                    problems.add(read.toJson() + ": the guard holds and the server refused the update: "
                            + refused.getMessage());
                }
            }
        }
        assertThat(problems).isEmpty();
    }

    private static boolean finite(Object value) {
        return value instanceof Integer || value instanceof Long || (value instanceof Double d && Double.isFinite(d))
                || (value instanceof Decimal128 d && !d.isNaN() && !d.isInfinite());
    }
}
