package dev.consistencykit.twophase.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import java.util.Set;

import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.Test;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.Updates;

/** The in-memory replay gives what the server would, or says it cannot. */
class UpdateReplayTest {

    private static final SpecCodec CODEC = new SpecCodec("t", Set.of("m"), CodecRegistries.fromRegistries(
            MongoClientSettings.getDefaultCodecRegistry()));

    private static Optional<String> replay(BsonDocument doc, Bson update) {
        List<BsonValue> ops = CODEC.encodeUpdate("u", Optional.of(update)).getValues();
        return UpdateReplay.apply(doc, ops);
    }

    @Test
    void shouldReplayArithmeticWithTheServersPromotion() {
        BsonDocument doc = BsonDocument.parse("{i: 1, l: {$numberLong: '5'}, d: 1.5, big: 2147483647}");

        assertThat(replay(doc, Updates.combine(Updates.inc("i", 2), Updates.inc("l", 1), Updates.inc("d", 1),
                Updates.inc("big", 1), Updates.inc("fresh", 7), Updates.mul("m2", 3)))).isEmpty();
        assertThat(doc).isEqualTo(BsonDocument.parse("{i: 3, l: {$numberLong: '6'}, d: 2.5,"
                + " big: {$numberLong: '2147483648'}, fresh: 7, m2: 0}"));
    }

    @Test
    void shouldReplaySetsBoundsAndArraysOnNestedPaths() {
        BsonDocument doc = BsonDocument.parse("{a: {b: 1}, tags: ['x', 'y', 'x'], n: 5}");

        assertThat(replay(doc, Updates.combine(Updates.set("a.c", "v"), Updates.unset("a.b"), Updates.max("n", 9),
                Updates.min("low", 2), Updates.pull("tags", "x"), Updates.addToSet("set", 1),
                Updates.push("list", 2)))).isEmpty();
        assertThat(doc).isEqualTo(BsonDocument.parse("{a: {c: 'v'}, tags: ['y'], n: 9, low: 2, set: [1],"
                + " list: [2]}"));
    }

    @Test
    void shouldRefuseWhatOnlyTheServerKnows() {
        assertThat(replay(new BsonDocument(), Updates.currentDate("at"))).isPresent();
        assertThat(replay(BsonDocument.parse("{s: 'x'}"), Updates.inc("s", 1))).isPresent();
        assertThat(replay(BsonDocument.parse("{n: {$numberLong: '9223372036854775807'}}"), Updates.inc("n", 1)))
                .isPresent();
        assertThat(replay(BsonDocument.parse("{a: [1]}"), Updates.set("a.0", 2))).isPresent();
    }
}
