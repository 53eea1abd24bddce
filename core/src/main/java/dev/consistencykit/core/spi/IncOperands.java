package dev.consistencykit.core.spi;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.bson.types.Decimal128;

import com.mongodb.client.model.Filters;

/**
 * Keeps an update's {@code $inc}s and {@code $mul}s to fields that hold a plain number. A field that holds an array
 * matches a comparison by any of its elements, so a guard such as {@code balance <= limit} holds on
 * {@code balance: [500, 50]}, and the {@code $inc} the guard let through is then refused by the server; NaN and the
 * infinities pass or fail comparisons depending on the server (the embedded server orders NaN above every number), and
 * an {@code $inc} on them changes nothing. A pattern that decides on such a guard and writes afterwards would decide,
 * then fail to write: this guard, evaluated by the server in the same filter as the decision's, refuses the document
 * first.
 *
 * <p>For each {@code $inc} on {@code a.b.c}, the filter holds only where {@code a} and {@code a.b} are missing or a
 * document (not an array, not a value an {@code $inc} cannot create a field in) and {@code a.b.c} is missing (the
 * {@code $inc} creates it) or an int, a long, or a double or decimal that is neither NaN nor an infinity, and not an
 * array; where an integral {@code $inc} meets a decimal, the sum is exact (the server's own {@code $add} says so: a
 * decimal holds 34 digits, and MongoDB rounds a sum that needs more). A path that names an array's element (a numeric
 * segment, a positional operator) is the caller's to mean, and left unguarded.
 */
public final class IncOperands {

    private static final List<String> INTEGERS = List.of("int", "long");
    private static final List<String> FRACTIONS = List.of("double", "decimal");

    private IncOperands() {
    }

    /**
     * The filter described above for every {@code $inc} and {@code $mul} of {@code update} (a rendered update);
     * {@code null} if none.
     */
    public static Bson guard(BsonDocument update) {
        List<Bson> guards = new ArrayList<>();
        Map<String, Change> changes = paths(update);
        for (String path : changes.keySet()) {
            String[] segments = path.split("\\.", -1);
            StringBuilder prefix = new StringBuilder();
            for (int i = 0; i < segments.length - 1; i++) {
                prefix.append(i == 0 ? "" : ".").append(segments[i]);
                String q = prefix.toString();
                guards.add(notArray(q));
                guards.add(Filters.or(Filters.exists(q, false), Filters.type(q, "object")));
            }
            guards.add(notArray(path));
            guards.add(Filters.or(Filters.exists(path, false), new Document(path, new Document("$type", INTEGERS)),
                    Filters.and(new Document(path, new Document("$type", FRACTIONS)),
                            Filters.gt(path, Double.NEGATIVE_INFINITY), Filters.lt(path, Double.POSITIVE_INFINITY))));
            Change change = changes.get(path);
            if (change.exactIncrement() != null) {
                // a decimal sum that needs more than 34 digits is rounded (MongoDB) or refused (the embedded server):
                // money a transfer would create or lose. The server's own arithmetic says whether it is exact: it is
                // when (v + n) - v is n and (v + n) - n is v, and a sum rounded away from v + n fails one of them (a
                // tiny v drowned in n passes the first and fails the second; a huge v, the other way round)
                long n = change.exactIncrement();
                Document sum = new Document("$add", List.of("$" + path, n));
                guards.add(Filters.or(Filters.not(Filters.type(path, "decimal")), Filters.expr(new Document("$and",
                        List.of(new Document("$eq", List.of(new Document("$subtract", List.of(sum, "$" + path)), n)),
                                new Document("$eq", List.of(new Document("$subtract", List.of(sum, n)),
                                        "$" + path)))))));
            }
        }
        return guards.isEmpty() ? null : Filters.and(guards);
    }

    /**
     * Words why {@link #guard} refuses {@code document} (read back after the server refused the guard): the first
     * {@code $inc} or {@code $mul} field, or field on its path, that holds what the operator cannot apply to; empty if
     * the document as read gives no such field (then the guard was not what refused it). It decides nothing a server decides: it
     * reads the values, and the server's refusal of the guard stays the decision.
     */
    public static Optional<String> refusal(BsonDocument update, Document document) {
        for (Map.Entry<String, Change> change : paths(update).entrySet()) {
            String path = change.getKey();
            String what = change.getValue().operator() + " of " + path;
            String[] segments = path.split("\\.", -1);
            Object current = document;
            StringBuilder at = new StringBuilder();
            for (int i = 0; i < segments.length && current instanceof Map<?, ?> map && map.containsKey(segments[i]);
                 i++) {
                at.append(i == 0 ? "" : ".").append(segments[i]);
                current = map.get(segments[i]);
                if (current instanceof List<?>) {
                    return Optional.of(what + " cannot apply to " + at + ": it holds an array, "
                            + Values.show(current) + " (a comparison matches any of its elements)");
                }
                if (i == segments.length - 1 && !addable(current)) {
                    return Optional.of(what + " cannot apply to " + at + ": it holds "
                            + Values.show(current) + ", not a finite number");
                }
                Long n = change.getValue().exactIncrement();
                if (i == segments.length - 1 && n != null && current instanceof Decimal128 d
                        && new BigDecimal(d.toString()).add(BigDecimal.valueOf(n)).precision() > 34) {
                    return Optional.of(what + " cannot apply to " + at + " exactly: it holds the decimal "
                            + Values.show(current) + ", and the sum needs more than the 34 digits of a decimal");
                }
                if (i < segments.length - 1 && !(current instanceof Map<?, ?>)) {
                    return Optional.of(what + " cannot create a field in " + at + ", which holds "
                            + Values.show(current));
                }
            }
        }
        return Optional.empty();
    }

    private static boolean addable(Object value) {
        if (value instanceof Integer || value instanceof Long) {
            return true;
        }
        if (value instanceof Double d) {
            return Double.isFinite(d);
        }
        return value instanceof Decimal128 d && !d.isNaN() && !d.isInfinite();
    }

    /**
     * What an {@code $inc} or {@code $mul} changes: its operator, and for an integral {@code $inc} its increment, whose
     * addition to a decimal the guard also holds to be exact.
     */
    private record Change(String operator, Long exactIncrement) {
    }

    /**
     * Each path an {@code $inc} or {@code $mul} of {@code update} changes, but those that name an array's element
     * (a numeric segment, a positional operator): they say the array is meant.
     */
    private static Map<String, Change> paths(BsonDocument update) {
        Map<String, Change> out = new LinkedHashMap<>();
        for (String operator : List.of("$inc", "$mul")) {
            BsonValue fields = update == null ? null : update.get(operator);
            if (fields == null || !fields.isDocument()) {
                continue;
            }
            for (Map.Entry<String, BsonValue> field : fields.asDocument().entrySet()) {
                boolean element = Arrays.stream(field.getKey().split("\\.", -1)).anyMatch(seg -> seg.startsWith("$")
                        || (!seg.isEmpty() && seg.chars().allMatch(Character::isDigit)));
                BsonValue v = field.getValue();
                Long exact = operator.equals("$inc") && (v.isInt32() || v.isInt64()) ? v.asNumber().longValue() : null;
                if (!element) {
                    out.putIfAbsent(field.getKey(), new Change(operator, exact));
                }
            }
        }
        return out;
    }

    private static Bson notArray(String path) {
        return Filters.not(Filters.type(path, "array"));
    }
}
