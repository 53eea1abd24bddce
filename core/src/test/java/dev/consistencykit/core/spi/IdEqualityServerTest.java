package dev.consistencykit.core.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonSymbol;
import org.bson.BsonValue;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.ServerDatabases;

/**
 * {@link Ids#idKey} and {@link Ids#idOrder} predict which ids MongoDB holds equal; this test asks the server instead.
 * Generated ids (every BSON type an id may have, numbers of one value in every numeric type, documents with the same
 * fields in other orders, nested arrays and symbols) are inserted one by one into a collection, whose unique
 * {@code _id} index is the server's verdict: an insert refused as a duplicate names the earlier id it equals. Java's
 * verdict must be the same for every id, on whichever server the suite runs (the embedded one, or the real engine in
 * CI). Seeds are fixed and printed. The embedded server compares numbers as doubles (docs/embedded-server.md), so there
 * the numbers a double cannot tell apart (a long above 2^53, a decimal such as 0.1) are left to a real server.
 */
@ExtendWith(ServerDatabases.class)
class IdEqualityServerTest {

    private static final int IDS_PER_SEED = 300;

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4})
    void shouldHoldIdsEqualExactlyWhereTheServersUniqueIndexDoes(long seed, MongoDatabase db) {
        System.out.println("IdEqualityServerTest seed " + seed);
        MongoCollection<BsonDocument> ids = db.getCollection("ids", BsonDocument.class);
        Random random = new Random(seed);
        List<BsonValue> pool = new ArrayList<>(edgeCases().stream()
                .filter(id -> !ServerDatabases.onEmbeddedServer() || exactAsDouble(id)).toList());
        while (pool.size() < IDS_PER_SEED) {
            pool.add(randomId(random, 0));
        }
        List<BsonValue> stored = new ArrayList<>();
        Map<BsonValue, Integer> javaClasses = new HashMap<>();
        List<String> divergences = new ArrayList<>();
        int checked = 0;
        for (BsonValue id : pool) {
            if (!acceptedAsId(id)) {
                continue;
            }
            checked++;
            BsonValue key = Ids.idKey(id);
            Integer javaSays = javaClasses.get(key);
            Integer serverSays = insertOrFindEqual(ids, id, stored.size());
            if (serverSays == null) {
                if (javaSays != null) {
                    divergences.add(id + ": the server holds it new, Java equal to " + stored.get(javaSays));
                }
                javaClasses.putIfAbsent(key, stored.size());
                stored.add(id);
            } else {
                if (!serverSays.equals(javaSays)) {
                    divergences.add(id + ": the server holds it equal to " + stored.get(serverSays) + ", Java "
                            + (javaSays == null ? "new" : "equal to " + stored.get(javaSays)));
                }
                if (Ids.idOrder().compare(id, stored.get(serverSays)) != 0) {
                    divergences.add(id + ": idOrder does not place it with " + stored.get(serverSays));
                }
            }
        }
        assertThat(checked).as("ids compared").isGreaterThanOrEqualTo(IDS_PER_SEED / 2);
        assertThat(stored.size()).as("distinct ids").isLessThan(checked);
        assertThat(divergences).as("seed " + seed + ": ids where Java and the server disagree").isEmpty();
    }

    /** {@code null} when the server stored {@code id} as new, else the index of the stored id it equals. */
    private static Integer insertOrFindEqual(MongoCollection<BsonDocument> ids, BsonValue id, int index) {
        try {
            ids.insertOne(new BsonDocument("_id", id).append("i", new BsonInt32(index)));
            return null;
        } catch (MongoWriteException e) {
            assertThat(e.getError().getCategory()).as("refusal of " + id).isEqualTo(ErrorCategory.DUPLICATE_KEY);
            List<BsonDocument> equal = ids.find(Filters.eq("_id", id)).into(new ArrayList<>());
            assertThat(equal).as("the stored id equal to " + id).hasSize(1);
            return equal.get(0).getInt32("i").getValue();
        }
    }

    private static boolean acceptedAsId(BsonValue id) {
        try {
            Ids.documentId(null, "_id", id);
            return true;
        } catch (InvalidInputException e) {
            return false;
        }
    }

    private static List<BsonValue> edgeCases() {
        ObjectId oid = new ObjectId("65a1b2c3d4e5f60718293a4b");
        return List.of(new BsonInt32(1), new BsonInt64(1), new BsonDouble(1.0), dec("1"), dec("1.000"), dec("1E+0"),
                new BsonDouble(-0.0), new BsonInt32(0), dec("-0"), dec("0E+10"),
                new BsonInt64(1L << 53), new BsonDouble(Math.pow(2, 53)), new BsonInt64((1L << 53) + 1),
                new BsonDouble(0.1), dec("0.1"), new BsonInt64(Long.MAX_VALUE), dec("9223372036854775807"),
                dec("9223372036854775808"), new BsonDouble(Math.pow(2, 63)),
                new BsonString("1"), new BsonString("a"), new BsonString("A"), new BsonString("e\u0301"),
                new BsonString("\u00e9"), new BsonObjectId(oid), new BsonObjectId(oid), new BsonBoolean(true),
                new BsonDateTime(0), new BsonDateTime(0), new BsonInt64(0),
                new BsonBinary((byte) 0, bytes(1)), new BsonBinary((byte) 4, bytes(1)), new BsonBinary((byte) 0, bytes(1)),
                doc("a", new BsonInt32(1), "b", new BsonInt32(2)), doc("b", new BsonInt32(2), "a", new BsonInt32(1)),
                doc("a", new BsonDouble(1.0), "b", new BsonInt64(2)), doc("a", new BsonString("x")),
                doc("a", new BsonSymbol("x")), doc("s", new BsonString("a")), doc("d", new BsonArray()),
                doc("a", new BsonArray(List.of(new BsonInt32(1), new BsonInt32(2)))),
                doc("a", new BsonArray(List.of(new BsonDouble(1), dec("2.0")))),
                doc("a", new BsonArray(List.of(new BsonInt32(2), new BsonInt32(1)))));
    }

    private static BsonValue randomId(Random random, int depth) {
        return switch (random.nextInt(depth == 0 ? 8 : 9)) {
            case 0, 1 -> randomNumber(random);
            case 2 -> new BsonString(List.of("a", "b", "A", "1", "ab", "\u00e9").get(random.nextInt(6)));
            case 3 -> new BsonObjectId(new ObjectId(String.format("%024x", random.nextInt(3))));
            case 4 -> new BsonBoolean(random.nextBoolean());
            case 5 -> new BsonDateTime(random.nextInt(3));
            case 6 -> new BsonBinary((byte) (random.nextBoolean() ? 0 : 4), bytes(random.nextInt(2)));
            case 7 -> depth < 2 ? randomDocument(random, depth) : randomNumber(random);
            default -> random.nextBoolean() ? new BsonSymbol(List.of("a", "b").get(random.nextInt(2)))
                    : new BsonArray(List.of(randomId(random, depth + 1), randomId(random, depth + 1)));
        };
    }

    private static BsonDocument randomDocument(Random random, int depth) {
        List<String> keys = new ArrayList<>(List.of("a", "b", "c").subList(0, 1 + random.nextInt(3)));
        java.util.Collections.shuffle(keys, random);
        BsonDocument out = new BsonDocument();
        for (String k : keys) {
            out.append(k, randomId(random, depth + 1));
        }
        return out;
    }

    /** Whether a number (anywhere in {@code id}) is one a double holds exactly, as the embedded server compares it. */
    private static boolean exactAsDouble(BsonValue id) {
        return switch (id.getBsonType()) {
            case INT64 -> Math.abs(id.asInt64().getValue()) <= 1L << 53;
            case DECIMAL128 -> id.asDecimal128().getValue().equals(Decimal128.NEGATIVE_ZERO)
                    || new BigDecimal(id.asDecimal128().getValue().bigDecimalValue().doubleValue())
                            .compareTo(id.asDecimal128().getValue().bigDecimalValue()) == 0;
            case DOUBLE -> Math.abs(id.asDouble().getValue()) <= Math.pow(2, 53);
            case DOCUMENT -> id.asDocument().values().stream().allMatch(IdEqualityServerTest::exactAsDouble);
            case ARRAY -> id.asArray().getValues().stream().allMatch(IdEqualityServerTest::exactAsDouble);
            default -> true;
        };
    }

    /** One of a few values, in a numeric type drawn at random among those that hold it. */
    private static BsonValue randomNumber(Random random) {
        List<String> values = ServerDatabases.onEmbeddedServer()
                ? List.of("0", "1", "-1", "2", "0.5", "2147483648", "1E+15")
                : List.of("0", "1", "-1", "2", "0.5", "0.1", "2147483648", "9007199254740993", "1E+20");
        String value = values.get(random.nextInt(values.size()));
        BigDecimal exact = new BigDecimal(value);
        List<BsonValue> forms = new ArrayList<>();
        forms.add(new BsonDecimal128(new Decimal128(exact.setScale(Math.max(0, exact.scale()) + random.nextInt(3)))));
        forms.add(new BsonDouble(exact.doubleValue()));
        if (exact.stripTrailingZeros().scale() <= 0 && exact.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) <= 0) {
            forms.add(new BsonInt64(exact.longValueExact()));
            if (exact.compareTo(BigDecimal.valueOf(Integer.MAX_VALUE)) <= 0) {
                forms.add(new BsonInt32(exact.intValueExact()));
            }
        }
        return forms.get(random.nextInt(forms.size()));
    }

    /** Sixteen bytes, as a UUID's subtype requires, the first one {@code first}. */
    private static byte[] bytes(int first) {
        byte[] out = new byte[16];
        out[0] = (byte) first;
        return out;
    }

    private static BsonValue dec(String value) {
        return new BsonDecimal128(Decimal128.parse(value));
    }

    private static BsonDocument doc(Object... keysAndValues) {
        BsonDocument out = new BsonDocument();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            out.append((String) keysAndValues[i], (BsonValue) keysAndValues[i + 1]);
        }
        return out;
    }
}
