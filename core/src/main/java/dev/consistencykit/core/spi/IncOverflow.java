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
 * Keeps an update's integral {@code $inc}s and {@code $mul}s inside a 64-bit integer. Without a guard the embedded
 * server wraps past the range and MongoDB refuses the write; with it, the write is not applied and the caller can say
 * why.
 */
public final class IncOverflow {

    private IncOverflow() {
    }

    /**
     * The filter that holds only where every integral {@code $inc} and {@code $mul} of {@code update} (a rendered
     * update document) stays in range: for {@code $inc n} on {@code path}, the field is not an integer above
     * {@code Long.MAX_VALUE - n} (below {@code Long.MIN_VALUE - n} for a negative {@code n}); for {@code $mul n}, not
     * an integer outside {@link #factorRange}; a double or a decimal field is left to the server's own arithmetic,
     * which does not wrap. {@code null} when there is none.
     */
    public static Bson guard(BsonDocument update) {
        List<Bson> guards = new ArrayList<>();
        for (Map.Entry<String, Long> inc : operands(update, "$inc").entrySet()) {
            long n = inc.getValue();
            if (n > 0) {
                guards.add(Filters.nor(Filters.and(integer(inc.getKey()),
                        Filters.gt(inc.getKey(), Long.MAX_VALUE - n))));
            } else if (n < 0) {
                guards.add(Filters.nor(Filters.and(integer(inc.getKey()),
                        Filters.lt(inc.getKey(), Long.MIN_VALUE - n))));
            }
        }
        for (Map.Entry<String, Long> mul : operands(update, "$mul").entrySet()) {
            long[] range = factorRange(mul.getValue());
            if (range[0] != Long.MIN_VALUE || range[1] != Long.MAX_VALUE) {
                guards.add(Filters.nor(Filters.and(integer(mul.getKey()), Filters.or(
                        Filters.lt(mul.getKey(), range[0]), Filters.gt(mul.getKey(), range[1])))));
            }
        }
        return guards.isEmpty() ? null : guards.size() == 1 ? guards.get(0) : Filters.and(guards);
    }

    /** Only integer arithmetic can pass the range: a double or a decimal field stays one, whatever its size. */
    private static Bson integer(String path) {
        return Filters.or(Filters.type(path, BsonType.INT32), Filters.type(path, BsonType.INT64));
    }

    /**
     * The integers {@code v} whose product {@code v * n} is a 64-bit integer: {@code [lowest, highest]}. Java's
     * division truncates toward zero, which is the ceiling of a negative quotient and the floor of a positive one:
     * for {@code n > 0}, {@code [MIN / n, MAX / n]}; for {@code n < -1}, {@code [MAX / n, MIN / n]}; {@code -1} takes
     * everything but {@code MIN}; {@code 0} and {@code 1} everything.
     */
    static long[] factorRange(long n) {
        if (n == 0 || n == 1) {
            return new long[] {Long.MIN_VALUE, Long.MAX_VALUE};
        }
        if (n == -1) {
            return new long[] {-Long.MAX_VALUE, Long.MAX_VALUE};
        }
        return n > 0 ? new long[] {Long.MIN_VALUE / n, Long.MAX_VALUE / n}
                : new long[] {Long.MAX_VALUE / n, Long.MIN_VALUE / n};
    }

    /**
     * Words the refusal of {@code update} by its {@link #guard} for a message: the first integral {@code $inc} whose
     * field, read back in {@code document}, is an integer out of its range, or else every integral {@code $inc}. It
     * decides nothing: the server's refusal of the guard is the decision (a caller that still holds its own
     * evidence on the document knows the guard was what failed).
     */
    public static String refusal(BsonDocument update, Document document) {
        for (Map.Entry<String, Long> mul : operands(update, "$mul").entrySet()) {
            Object actual = Values.at(document, mul.getKey());
            if (actual instanceof Integer || actual instanceof Long) {
                long current = ((Number) actual).longValue();
                long[] range = factorRange(mul.getValue());
                if (current < range[0] || current > range[1]) {
                    return "$mul " + mul.getValue() + " of " + mul.getKey() + " (now " + current + ") would pass the"
                            + " range of a 64-bit integer";
                }
            }
        }
        Map<String, Long> increments = operands(update, "$inc");
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

    private static Map<String, Long> operands(BsonDocument update, String operator) {
        Map<String, Long> out = new java.util.LinkedHashMap<>();
        BsonValue inc = update == null ? null : update.get(operator);
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
