package dev.consistencykit.conformance;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;

import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;

/**
 * Generated values, documents, filters and updates, from one seed: every kind of value a field may hold (numbers of
 * each type at their edges: NaN, ±0, infinities, Decimal128's largest, smallest and most precise, longs past 2^53;
 * strings, booleans, null, ids, dates; documents and arrays of them, nested), and the filters and updates of the
 * operators the patterns and their users' tests use, on a field, a path through a document, and a missing field.
 */
final class ValueCases {

    /** The fields a document may have; {@code c.x} reaches into the document {@code c} or through an array of them. */
    private static final List<String> FIELDS = List.of("a", "b", "c.x", "z");
    private static final List<String> TYPES = List.of("number", "double", "int", "long", "decimal", "string", "array",
            "object", "null", "bool");

    private final Random random;

    ValueCases(long seed) {
        this.random = new Random(seed);
    }

    /** A number of one of the four numeric types, often at an edge. */
    BsonValue number() {
        return switch (random.nextInt(4)) {
            case 0 -> new BsonInt32(ints(0, 1, -1, 7, 100, Integer.MAX_VALUE, Integer.MIN_VALUE, random.nextInt(200)
                    - 100));
            case 1 -> new BsonInt64(longs(0L, 1L, 7L, 100L, (1L << 53) + 1, Long.MAX_VALUE, Long.MIN_VALUE,
                    9_007_199_254_740_993L, random.nextInt(200) - 100L));
            case 2 -> new BsonDouble(doubles(0.0, -0.0, 1.0, 0.1, 1.5, 7.0, 100.0, 0.30000000000000004, Double.NaN,
                    Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 9007199254740992.0, 1e300, -1e-300,
                    Double.MAX_VALUE, random.nextInt(200) - 100.5));
            default -> new BsonDecimal128(pick(Decimal128.parse("0"), Decimal128.NEGATIVE_ZERO,
                    Decimal128.parse("0.1"), Decimal128.parse("1.0"), Decimal128.parse("1.00"), Decimal128.parse("7"),
                    Decimal128.parse("100"), Decimal128.NaN, Decimal128.NEGATIVE_NaN, Decimal128.POSITIVE_INFINITY,
                    Decimal128.NEGATIVE_INFINITY, Decimal128.parse("9999999999.999999999999999999999999"),
                    Decimal128.parse("1E-6176"), Decimal128.parse("9.999999999999999999999999999999999E+6144"),
                    Decimal128.parse("9007199254740993"),
                    new Decimal128(BigDecimal.valueOf(random.nextInt(2000) - 1000, 2))));
        };
    }

    /** Any value: a number most often, else another scalar, a document or an array (nested at most twice). */
    BsonValue value() {
        return value(2);
    }

    private BsonValue value(int depth) {
        int kind = random.nextInt(depth > 0 ? 14 : 10);
        return switch (kind) {
            case 0, 1, 2, 3, 4 -> number();
            case 5 -> new BsonString(pick("", "a", "b", "12", "ä"));
            case 6 -> BsonBoolean.valueOf(random.nextBoolean());
            case 7 -> BsonNull.VALUE;
            case 8 -> new BsonObjectId(new ObjectId(pick("650000000000000000000001", "650000000000000000000002")));
            case 9 -> new BsonDateTime(longs(0L, 1_700_000_000_000L, -1L));
            case 10, 11 -> array(depth - 1);
            default -> new BsonDocument("x", value(depth - 1));
        };
    }

    private BsonArray array(int depth) {
        BsonArray a = new BsonArray();
        int n = random.nextInt(4);
        for (int i = 0; i < n; i++) {
            a.add(random.nextInt(3) == 0 ? new BsonDocument("x", value(depth)) : value(depth));
        }
        return a;
    }

    /** A document with some of a, b and c (c a document with x, or an array of such documents). */
    BsonDocument document() {
        BsonDocument d = new BsonDocument();
        if (random.nextInt(6) != 0) {
            d.put("a", value());
        }
        if (random.nextInt(3) != 0) {
            d.put("b", number());
        }
        switch (random.nextInt(4)) {
            case 0 -> d.put("c", new BsonDocument("x", value()));
            case 1 -> d.put("c", new BsonArray(List.of(new BsonDocument("x", value()),
                    new BsonDocument("x", value()))));
            case 2 -> d.put("c", value());
            default -> {
            }
        }
        return d;
    }

    BsonDocument filter() {
        String field = field();
        BsonValue v = value();
        BsonDocument condition = switch (random.nextInt(13)) {
            case 0 -> null;
            case 1 -> op("$gt", v);
            case 2 -> op("$gte", v);
            case 3 -> op("$lt", v);
            case 4 -> op("$lte", v);
            case 5 -> op("$ne", v);
            case 6 -> op("$in", new BsonArray(List.of(v, value())));
            case 7 -> op("$nin", new BsonArray(List.of(v, value())));
            case 8 -> op("$exists", BsonBoolean.valueOf(random.nextBoolean()));
            case 9 -> op("$type", new BsonString(pick(TYPES.toArray(new String[0]))));
            case 10 -> op("$elemMatch", op(pick("$gt", "$lt", "$gte", "$eq"), number()));
            case 11 -> op("$not", op(pick("$gt", "$lt", "$gte", "$lte"), v));
            default -> op("$gt", number()).append("$lte", number());
        };
        return new BsonDocument(field, condition == null ? v : condition);
    }

    BsonDocument update() {
        String field = field();
        List<Supplier<BsonDocument>> updates = new ArrayList<>();
        updates.add(() -> op("$inc", op(field, number())));
        updates.add(() -> op("$mul", op(field, number())));
        updates.add(() -> op("$min", op(field, value())));
        updates.add(() -> op("$max", op(field, value())));
        updates.add(() -> op("$set", op(field, value())));
        updates.add(() -> op("$unset", op(field, new BsonString(""))));
        updates.add(() -> op("$push", op(field, value())));
        updates.add(() -> op("$addToSet", op(field, value())));
        updates.add(() -> op("$pull", op(field, value())));
        updates.add(() -> op("$pull", op(field, op(pick("$gt", "$lt", "$gte"), number()))));
        updates.add(() -> op("$inc", op(field, number()).append(field.equals("b") ? "a" : "b", number())));
        return updates.get(random.nextInt(updates.size())).get();
    }

    private String field() {
        return FIELDS.get(random.nextInt(FIELDS.size()));
    }

    private static BsonDocument op(String name, BsonValue value) {
        return new BsonDocument(name, value);
    }

    @SafeVarargs
    private <T> T pick(T... choices) {
        return choices[random.nextInt(choices.length)];
    }

    private int ints(int... choices) {
        return choices[random.nextInt(choices.length)];
    }

    private long longs(long... choices) {
        return choices[random.nextInt(choices.length)];
    }

    private double doubles(double... choices) {
        return choices[random.nextInt(choices.length)];
    }
}
