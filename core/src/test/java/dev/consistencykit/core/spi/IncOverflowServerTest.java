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

import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;

import dev.consistencykit.core.ServerDatabases;

/**
 * {@link IncOverflow#guard} is held to exact arithmetic and to the server's own {@code $inc} and {@code $mul}: every
 * stored number type near the edges of the range, every operand type. The guard refuses exactly the integer results
 * past the 64-bit range (a double or a decimal past it is arithmetic, not an overflow), never an update the server
 * would apply, and what it lets through is the exact result. The embedded server wraps instead of refusing; the real
 * engine refuses an overflowing {@code $inc} but applies a {@code $mul} whose product wraps to 0
 * ({@code Long.MIN_VALUE * 2} is 0 there): the guard keeps both from happening.
 */
@ExtendWith(ServerDatabases.class)
class IncOverflowServerTest {

    @Test
    void shouldRefuseExactlyTheIncrementsTheServerRefusesUnguarded(MongoDatabase db) {
        check(db, "$inc", List.of(new BsonInt32(5), new BsonInt32(-5), new BsonInt32(Integer.MAX_VALUE),
                new BsonInt64(Long.MAX_VALUE - 1), new BsonInt64(Long.MIN_VALUE + 1), new BsonInt64(1)));
    }

    @Test
    void shouldRefuseExactlyTheMultiplicationsTheServerRefusesUnguarded(MongoDatabase db) {
        check(db, "$mul", List.of(new BsonInt32(2), new BsonInt32(-2), new BsonInt32(3), new BsonInt32(-1),
                new BsonInt32(0), new BsonInt32(Integer.MAX_VALUE), new BsonInt64(Long.MIN_VALUE),
                new BsonInt64(1L << 32), new BsonInt64(-(1L << 31))));
    }

    private static void check(MongoDatabase db, String operator, List<BsonValue> increments) {
        MongoCollection<BsonDocument> c = db.getCollection("numbers", BsonDocument.class);
        List<BsonValue> stored = List.of(new BsonInt32(0), new BsonInt32(Integer.MAX_VALUE),
                new BsonInt32(Integer.MIN_VALUE), new BsonInt64(0), new BsonInt64(Long.MAX_VALUE - 1),
                new BsonInt64(Long.MIN_VALUE + 1), new BsonInt64(Long.MAX_VALUE), new BsonInt64(1L << 62),
                new BsonDouble(1e19), new BsonDouble(-1e19), new BsonDouble(5.5),
                new BsonDecimal128(Decimal128.parse("9223372036854775807")), new BsonDecimal128(Decimal128.parse("5")),
                new BsonInt64(Long.MIN_VALUE), new BsonInt64(-Long.MAX_VALUE), new BsonInt64(Long.MAX_VALUE / 3),
                new BsonInt64(Long.MAX_VALUE / 3 + 1), new BsonInt64(Long.MIN_VALUE / 3), new BsonInt64(Long.MIN_VALUE / 3 - 1),
                new BsonInt64(1L << 31), new BsonInt64((1L << 31) + 1), new BsonInt32(-1));
        List<String> divergences = new ArrayList<>();
        int id = 0;
        for (BsonValue value : stored) {
            for (BsonValue inc : increments) {
                BsonDocument update = new BsonDocument(operator, new BsonDocument("v", inc));
                int guarded = id++;
                int unguarded = id++;
                c.insertMany(List.of(doc(guarded, value), doc(unguarded, value)));
                Bson guard = IncOverflow.guard(update);
                Bson filter = guard == null ? Filters.eq("_id", guarded)
                        : Filters.and(Filters.eq("_id", guarded), guard);
                String what = value + " " + operator + " " + inc;
                boolean guardHolds;
                try {
                    guardHolds = c.updateOne(filter, update).getMatchedCount() == 1;
                } catch (MongoCommandException inexact) {
                    // the embedded server refuses a decimal product it would have to round (MongoDB rounds it):
                    // docs/embedded-server.md, "decimal arithmetic"; no integer is at stake
                    assertThat(ServerDatabases.onEmbeddedServer() && value.isDecimal128()).as(what).isTrue();
                    continue;
                }
                boolean serverApplies;
                try {
                    c.updateOne(Filters.eq("_id", unguarded), update);
                    serverApplies = true;
                } catch (MongoWriteException refused) {
                    serverApplies = false;
                }
                boolean integers = value.isInt32() || value.isInt64();
                BigDecimal exact = integers ? exact(operator, value, inc) : null;
                boolean inRange = exact == null || (exact.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) <= 0
                        && exact.compareTo(BigDecimal.valueOf(Long.MIN_VALUE)) >= 0);
                if (guardHolds != inRange) {
                    divergences.add(what + ": the guard " + (guardHolds ? "holds" : "refuses"));
                }
                if (guardHolds && !serverApplies) {
                    divergences.add(what + ": the guard holds, the server refuses it");
                }
                BsonValue after = c.find(Filters.eq("_id", guarded)).first().get("v");
                if (guardHolds && integers && exact.compareTo(new BigDecimal(after.asNumber().longValue())) != 0) {
                    divergences.add(what + ": the guard let it wrap to " + after);
                }
            }
        }
        assertThat(id).isEqualTo(2 * stored.size() * increments.size());
        assertThat(divergences).isEmpty();
    }

    private static BsonDocument doc(int id, BsonValue value) {
        return new BsonDocument("_id", new BsonInt32(id)).append("v", value);
    }

    private static BigDecimal exact(String operator, BsonValue value, BsonValue inc) {
        BigDecimal a = BigDecimal.valueOf(value.asNumber().longValue());
        BigDecimal b = BigDecimal.valueOf(inc.asNumber().longValue());
        return operator.equals("$inc") ? a.add(b) : a.multiply(b);
    }
}
