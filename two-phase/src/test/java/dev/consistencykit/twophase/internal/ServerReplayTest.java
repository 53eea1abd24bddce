package dev.consistencykit.twophase.internal;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;

import org.bson.BsonArray;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.conversions.Bson;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * A replayed update gives exactly what the server gives when the same update is sent to the same document: each case
 * is applied to a real document and replayed on a copy, and the two are compared as BSON (types included). The cases
 * are those where a replay in Java once differed from MongoDB, then generated ones over every operator the update
 * grammar accepts, every numeric type, nested paths and array positions.
 */
@ExtendWith(MongoTestExtension.class)
class ServerReplayTest {

    private static final SpecCodec CODEC = new SpecCodec("t", Set.of("m"),
            com.mongodb.MongoClientSettings.getDefaultCodecRegistry());
    /** Generated cases, seed printed by a failure. */
    static final int GENERATED = 100;
    static final long SEED = 20261126L;

    private static ServerReplay replay(MongoDatabase db) {
        return new ServerReplay(new TransactionStore(dev.consistencykit.twophase.TwoPhaseCommit.builder(db).build()
                .config(), db));
    }

    /** The server's own result of {@code update} on {@code doc}; empty when the server refuses it. */
    private static Optional<BsonDocument> server(MongoDatabase db, BsonDocument doc, Bson update) {
        MongoCollection<BsonDocument> real = db.getCollection("real", BsonDocument.class);
        real.insertOne(doc.clone());
        try {
            real.updateOne(eq("_id", doc.get("_id")), update);
            return Optional.of(real.find(eq("_id", doc.get("_id"))).first());
        } catch (MongoException refused) {
            return Optional.empty();
        } finally {
            real.deleteOne(eq("_id", doc.get("_id")));
        }
    }

    private static void assertSameAsServer(MongoDatabase db, String what, BsonDocument doc, Bson update) {
        List<BsonValue> ops = CODEC.encodeUpdate("u", Optional.of(update)).getValues();
        Optional<BsonDocument> expected = server(db, doc, update);
        BsonDocument copy = doc.clone();
        Optional<String> refused = replay(db).apply(copy, ops);
        if (expected.isEmpty()) {
            assertThat(refused).as(what + ": the server refuses it, so the replay cannot resolve it").isPresent();
            assertThat(copy).as(what + ": left as it was").isEqualTo(doc);
        } else {
            assertThat(refused).as(what).isEmpty();
            assertThat(copy).as(what + ": " + update.toBsonDocument().toJson()).isEqualTo(expected.get());
        }
    }

    @Test
    void shouldLeaveNullWhereAnArrayElementIsUnsetAsTheServerDoes(MongoDatabase db) {
        assertSameAsServer(db, "unset tags.1", BsonDocument.parse("{_id: 1, tags: ['a', 'b', 'c']}"),
                Updates.unset("tags.1"));
    }

    @Test
    void shouldRoundADecimalSumAsTheServerDoesWithoutARawException(MongoDatabase db) {
        BsonDocument doc = new BsonDocument("_id", new BsonInt32(1)).append("d",
                new BsonDecimal128(Decimal128.parse("9999999999999999999999999999999999")));
        assertSameAsServer(db, "decimal $inc that needs rounding", doc,
                Updates.inc("d", Decimal128.parse("0.5")));
        assertSameAsServer(db, "decimal $mul that needs rounding", doc,
                Updates.mul("d", Decimal128.parse("1.000000000000000000000000000000001")));
    }

    @Test
    void shouldConvertADoubleOperandToDecimalAsTheServerDoes(MongoDatabase db) {
        BsonDocument doc = new BsonDocument("_id", new BsonInt32(1)).append("d",
                new BsonDecimal128(Decimal128.parse("1")));
        assertSameAsServer(db, "decimal $inc by a double", doc, Updates.inc("d", 0.1));
        assertSameAsServer(db, "decimal $mul by a double", doc, Updates.mul("d", 1.0 / 3));
    }

    @Test
    void shouldCompareADoubleWithADecimalAsTheServerDoes(MongoDatabase db) {
        BsonDocument doc = new BsonDocument("_id", new BsonInt32(1)).append("d", new BsonDouble(0.1));
        assertSameAsServer(db, "$min decimal 0.1 against double 0.1", doc,
                Updates.min("d", Decimal128.parse("0.1")));
        assertSameAsServer(db, "$max decimal 0.1 against double 0.1", doc,
                Updates.max("d", Decimal128.parse("0.1")));
    }

    @Test
    void shouldCompareEmbeddedDocumentsInAddToSetAsTheServerDoes(MongoDatabase db) {
        BsonDocument doc = BsonDocument.parse("{_id: 1, set: [{a: 1}]}");
        assertSameAsServer(db, "$addToSet {a: 1L} beside {a: 1}", doc,
                Updates.addToSet("set", new org.bson.Document("a", 1L)));
    }

    @Test
    void shouldNotResolveWhatOnlyTheCommittingServerKnowsNorWhatItRefuses(MongoDatabase db) {
        BsonDocument doc = BsonDocument.parse("{_id: 1, s: 'x'}");
        assertThat(replay(db).apply(doc.clone(), CODEC.encodeUpdate("u", Optional.of(Updates.currentDate("at")))
                .getValues())).isPresent();
        assertSameAsServer(db, "$inc of a string", doc, Updates.inc("s", 1));
        assertSameAsServer(db, "$inc past a 64-bit integer",
                BsonDocument.parse("{_id: 1, n: {$numberLong: '9223372036854775807'}}"), Updates.inc("n", 1L));
    }

    @Test
    void shouldLeaveNoCopyBehindAndSweepTheCopiesOfADeadReader(MongoDatabase db) {
        MongoCollection<BsonDocument> scratch = db.getCollection(TransactionSchema.scratchName("transactions"),
                BsonDocument.class);
        assertSameAsServer(db, "a plain $inc", BsonDocument.parse("{_id: 1, n: 1}"), Updates.inc("n", 1));
        assertThat(scratch.countDocuments()).as("every copy deleted").isZero();

        // a reader that died between its insert and its delete long ago, and one that is replaying now: the sweep's
        // cutoff is taken before the live copy is made, so the answer does not depend on how long anything takes
        ObjectId old = new ObjectId("5f5e1000" + "0000000000000001");   // 2020-09-13
        scratch.insertOne(new BsonDocument("_id", new org.bson.BsonObjectId(old)));
        Date cutoff = new ObjectId().getDate();
        scratch.insertOne(new BsonDocument("_id", new org.bson.BsonObjectId(new ObjectId())));
        assertThat(replay(db).sweep(cutoff)).isEqualTo(1);
        assertThat(scratch.countDocuments()).as("the copy of a read in progress stays").isEqualTo(1);
    }

    @Test
    void shouldGiveWhatTheServerGivesOnGeneratedUpdates(MongoDatabase db) {
        Random random = new Random(SEED);
        for (int i = 0; i < GENERATED; i++) {
            BsonDocument doc = document(random).append("_id", new BsonInt32(i));
            Bson update = update(random);
            assertSameAsServer(db, "case " + i + " of seed " + SEED + " on " + doc.toJson(), doc, update);
        }
    }

    // ---------------------------------------------------------------- generators

    private static final List<String> PATHS = List.of("n", "a.n", "a.b.n", "arr.0", "arr.1", "arr.5", "s", "x");

    private static BsonDocument document(Random random) {
        return new BsonDocument("n", number(random)).append("a", new BsonDocument("n", number(random))
                        .append("b", new BsonDocument("n", number(random))))
                .append("arr", new BsonArray(List.of(number(random), number(random), new BsonString("v"))))
                .append("s", new BsonString("text")).append("set", new BsonArray(List.of(number(random),
                        new BsonDocument("a", number(random)))));
    }

    private static BsonValue number(Random random) {
        return switch (random.nextInt(8)) {
            case 0 -> new BsonInt32(random.nextInt(200) - 100);
            case 1 -> new BsonInt32(random.nextBoolean() ? Integer.MAX_VALUE : Integer.MIN_VALUE);
            case 2 -> new BsonInt64(random.nextInt(200) - 100);
            case 3 -> new BsonInt64(random.nextBoolean() ? Long.MAX_VALUE - random.nextInt(3) : Long.MIN_VALUE);
            case 4 -> new BsonDouble((random.nextInt(2000) - 1000) / 10.0);
            case 5 -> new BsonDouble(random.nextBoolean() ? 0.1 : 1e300);
            case 6 -> new BsonDecimal128(new Decimal128(new BigDecimal(random.nextInt(2000) - 1000).movePointLeft(
                    random.nextInt(4))));
            default -> new BsonDecimal128(Decimal128.parse(random.nextBoolean()
                    ? "9999999999999999999999999999999999" : "0.1"));
        };
    }

    private static Number javaNumber(Random random) {
        BsonValue v = number(random);
        return switch (v.getBsonType()) {
            case INT32 -> v.asInt32().getValue();
            case INT64 -> v.asInt64().getValue();
            case DOUBLE -> v.asDouble().getValue();
            default -> v.asDecimal128().getValue();
        };
    }

    private static Bson update(Random random) {
        List<Bson> parts = new ArrayList<>();
        List<String> used = new ArrayList<>();
        int n = 1 + random.nextInt(3);
        for (int i = 0; i < n; i++) {
            String path = PATHS.get(random.nextInt(PATHS.size()));
            if (used.stream().anyMatch(u -> u.startsWith(path) || path.startsWith(u))) {
                continue;
            }
            used.add(path);
            parts.add(switch (random.nextInt(9)) {
                case 0 -> Updates.set(path, javaNumber(random));
                case 1 -> Updates.unset(path);
                case 2 -> Updates.inc(path, javaNumber(random));
                case 3 -> Updates.mul(path, javaNumber(random));
                case 4 -> Updates.min(path, javaNumber(random));
                case 5 -> Updates.max(path, javaNumber(random));
                case 6 -> Updates.push("set", javaNumber(random));
                case 7 -> Updates.addToSet("set", random.nextBoolean() ? javaNumber(random)
                        : new org.bson.Document("a", javaNumber(random)));
                default -> Updates.pull("set", javaNumber(random));
            });
            if (parts.get(parts.size() - 1).toBsonDocument().toJson().contains("\"set\"")) {
                used.add("set");
                break;
            }
        }
        return Updates.combine(parts);
    }
}
