package dev.consistencykit.core.spi;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.bson.BsonDocument;
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
     * stays in range: for {@code $inc n} on {@code path}, the field is missing or at most {@code Long.MAX_VALUE - n}
     * (at least {@code Long.MIN_VALUE - n} for a negative {@code n}); {@code null} when there is none.
     */
    public static Bson guard(BsonDocument update) {
        List<Bson> guards = new ArrayList<>();
        for (Map.Entry<String, Long> inc : increments(update).entrySet()) {
            long n = inc.getValue();
            if (n > 0) {
                guards.add(Filters.not(Filters.gt(inc.getKey(), Long.MAX_VALUE - n)));
            } else if (n < 0) {
                guards.add(Filters.not(Filters.lt(inc.getKey(), Long.MIN_VALUE - n)));
            }
        }
        return guards.isEmpty() ? null : guards.size() == 1 ? guards.get(0) : Filters.and(guards);
    }

    /** The first integral {@code $inc} of {@code update} that would pass the range on {@code document}, described. */
    public static Optional<String> of(BsonDocument update, Document document) {
        for (Map.Entry<String, Long> inc : increments(update).entrySet()) {
            Object actual = document.getEmbedded(List.of(inc.getKey().split("\\.", -1)), Object.class);
            if (actual instanceof Integer || actual instanceof Long) {
                long n = inc.getValue();
                long current = ((Number) actual).longValue();
                if (n > 0 ? current > Long.MAX_VALUE - n : current < Long.MIN_VALUE - n) {
                    return Optional.of("$inc " + n + " of " + inc.getKey() + " (now " + current + ") would pass the"
                            + " range of a 64-bit integer");
                }
            }
        }
        return Optional.empty();
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
