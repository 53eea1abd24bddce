package dev.consistencykit.core.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;

import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.bson.conversions.Bson;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;

import dev.consistencykit.core.ServerDatabases;

/**
 * {@link IncOverflow#guard} is held to the server's own {@code $inc}: every stored number type near the edges of the
 * range, every increment type. On a real server (MongoDB, the real engine in CI) the guard refuses exactly the
 * increments the server would refuse unguarded, and never one it would apply (a double or a decimal past the 64-bit
 * range is arithmetic, not an overflow). The embedded server wraps instead of refusing, so there the guarded update
 * is held to never leave an integer wrapped.
 */
@ExtendWith(ServerDatabases.class)
class IncOverflowServerTest {

    @Test
    void shouldRefuseExactlyTheIncrementsTheServerRefusesUnguarded(MongoDatabase db) {
        MongoCollection<BsonDocument> c = db.getCollection("numbers", BsonDocument.class);
        List<BsonValue> stored = List.of(new BsonInt32(0), new BsonInt32(Integer.MAX_VALUE),
                new BsonInt32(Integer.MIN_VALUE), new BsonInt64(0), new BsonInt64(Long.MAX_VALUE - 1),
                new BsonInt64(Long.MIN_VALUE + 1), new BsonInt64(Long.MAX_VALUE), new BsonInt64(1L << 62),
                new BsonDouble(1e19), new BsonDouble(-1e19), new BsonDouble(5.5),
                new BsonDecimal128(Decimal128.parse("9223372036854775807")), new BsonDecimal128(Decimal128.parse("5")));
        List<BsonValue> increments = List.of(new BsonInt32(5), new BsonInt32(-5), new BsonInt32(Integer.MAX_VALUE),
                new BsonInt64(Long.MAX_VALUE - 1), new BsonInt64(Long.MIN_VALUE + 1), new BsonInt64(1));
        List<String> divergences = new ArrayList<>();
        int id = 0;
        for (BsonValue value : stored) {
            for (BsonValue inc : increments) {
                BsonDocument update = new BsonDocument("$inc", new BsonDocument("v", inc));
                int guarded = id++;
                int unguarded = id++;
                c.insertMany(List.of(doc(guarded, value), doc(unguarded, value)));
                Bson guard = IncOverflow.guard(update);
                boolean guardHolds = c.updateOne(Filters.and(Filters.eq("_id", guarded), guard), update)
                        .getMatchedCount() == 1;
                boolean serverApplies;
                try {
                    c.updateOne(Filters.eq("_id", unguarded), update);
                    serverApplies = true;
                } catch (MongoWriteException refused) {
                    serverApplies = false;
                }
                String what = value + " $inc " + inc;
                if (ServerDatabases.onEmbeddedServer()) {
                    BsonValue after = c.find(Filters.eq("_id", guarded)).first().get("v");
                    if (guardHolds && (value.isInt32() || value.isInt64()) && exactSum(value, inc)
                            .compareTo(new BigDecimal(after.asNumber().longValue())) != 0) {
                        divergences.add(what + ": the guard let it wrap to " + after);
                    }
                } else if (guardHolds != serverApplies) {
                    divergences.add(what + ": the guard " + (guardHolds ? "holds" : "refuses") + ", the server "
                            + (serverApplies ? "applies it" : "refuses it"));
                }
            }
        }
        assertThat(id).isEqualTo(2 * stored.size() * increments.size());
        assertThat(divergences).isEmpty();
    }

    private static BsonDocument doc(int id, BsonValue value) {
        return new BsonDocument("_id", new BsonInt32(id)).append("v", value);
    }

    private static BigDecimal exactSum(BsonValue value, BsonValue inc) {
        return BigDecimal.valueOf(value.asNumber().longValue()).add(BigDecimal.valueOf(inc.asNumber().longValue()));
    }
}
