package dev.consistencykit.core.spi;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.client.model.Filters;

/**
 * Keeps an update's integral {@code $inc}s inside a 64-bit integer. Without a guard the embedded server wraps past the
 * range and MongoDB refuses the write; with it, the write is not applied and the caller can say why.
 */
public final class IncOverflow {

    private IncOverflow() {
    }

    /**
     * The filter that holds only where every integral {@code $inc} of {@code update} (a rendered update document)
     * stays in range: for {@code $inc n} on {@code path}, the field is not an integer above
     * {@code Long.MAX_VALUE - n} (below {@code Long.MIN_VALUE - n} for a negative {@code n}); a double or a decimal
     * field is left to the server's own arithmetic, which does not wrap.
     * {@code null} when there is none.
     */
    public static Bson guard(BsonDocument update) {
        List<Bson> guards = new ArrayList<>();
        for (Map.Entry<String, Long> inc : increments(update).entrySet()) {
            long n = inc.getValue();
            // only integer arithmetic can pass the range (a double or a decimal field stays one, whatever its size)
            Bson integer = Filters.or(Filters.type(inc.getKey(), BsonType.INT32),
                    Filters.type(inc.getKey(), BsonType.INT64));
            if (n > 0) {
                guards.add(Filters.nor(Filters.and(integer, Filters.gt(inc.getKey(), Long.MAX_VALUE - n))));
            } else if (n < 0) {
                guards.add(Filters.nor(Filters.and(integer, Filters.lt(inc.getKey(), Long.MIN_VALUE - n))));
            }
        }
        return guards.isEmpty() ? null : guards.size() == 1 ? guards.get(0) : Filters.and(guards);
    }

    /**
     * Words the refusal of {@code update} by its {@link #guard} for a message: the first integral {@code $inc} whose
     * field, read back in {@code document}, is an integer out of its range, or else every integral {@code $inc}. It
     * decides nothing: the server's refusal of the guard is the decision (a caller that still holds its own
     * evidence on the document knows the guard was what failed).
     */
    public static String refusal(BsonDocument update, Document document) {
        Map<String, Long> increments = increments(update);
        for (Map.Entry<String, Long> inc : increments.entrySet()) {
            Object actual = Values.at(document, inc.getKey());
            if (actual instanceof Integer || actual instanceof Long) {
                long n = inc.getValue();
                long current = ((Number) actual).longValue();
                if (n > 0 ? current > Long.MAX_VALUE - n : current < Long.MIN_VALUE - n) {
                    return "$inc " + n + " of " + inc.getKey() + " (now " + current + ") would pass the range of a"
                            + " 64-bit integer";
                }
            }
        }
        return "$inc " + increments + " would pass the range of a 64-bit integer on the document as it was";
    }

    private static Map<String, Long> increments(BsonDocument update) {
        Map<String, Long> out = new java.util.LinkedHashMap<>();
        BsonValue inc = update == null ? null : update.get("$inc");
        if (inc != null && inc.isDocument()) {
            for (Map.Entry<String, BsonValue> e : inc.asDocument().entrySet()) {
                if (e.getValue().isInt32() || e.getValue().isInt64()) {
                    out.put(e.getKey(), e.getValue().asNumber().longValue());
                }
            }
        }
        return out;
    }
}
