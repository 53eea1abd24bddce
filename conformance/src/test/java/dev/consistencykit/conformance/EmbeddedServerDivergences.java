package dev.consistencykit.conformance;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.types.Decimal128;

/**
 * The divergences of the embedded server from the real one that docs/embedded-server.md lists ("Measured against the
 * real engine"), each by the name its row there gives and the cases it covers, in the order of that table: a case is
 * the first row whose condition it meets. {@link EmbeddedServerDifferentialTest} fails on a case no row covers.
 */
final class EmbeddedServerDivergences {

    private record Listed(String name, Predicate<EmbeddedServerDifferentialTest.Divergence> covers) {
    }

    private static final Set<String> ARITHMETIC = Set.of("$inc", "$mul");
    private static final Set<String> ARRAY_OPERATORS = Set.of("$push", "$addToSet", "$pull");

    private static final List<Listed> LISTED = List.of(
            new Listed("NaN", d -> values(d).stream().anyMatch(EmbeddedServerDivergences::nan)),
            new Listed("array operators on a value that is no array", d -> d.kind().equals("update")
                    && ARRAY_OPERATORS.contains(d.operation().getFirstKey())
                    && reached(d).stream().anyMatch(v -> !v.isArray())),
            new Listed("an equal number of another type", d -> d.kind().equals("update")
                    && !arithmetic(d) && operands(d).stream().anyMatch(o -> reached(d).stream().anyMatch(
                    v -> equalNumbers(o, v)))),
            new Listed("an overflowing long", d -> arithmetic(d) && overflows(d)),
            new Listed("numbers as doubles", d -> values(d).stream().anyMatch(EmbeddedServerDivergences::inexact)),
            new Listed("a path through an array or a value", d -> d.kind().equals("update") && throughArray(d)),
            new Listed("decimal arithmetic", d -> arithmetic(d) && values(d).stream().anyMatch(
                    v -> v.isDecimal128())),
            new Listed("arithmetic on a value that is no number", d -> arithmetic(d) && reached(d).stream().anyMatch(
                    v -> !v.isNumber() && !v.isDecimal128())),
            new Listed("the sign of a zero", d -> arithmetic(d) && (reached(d).isEmpty() || values(d).stream()
                    .anyMatch(EmbeddedServerDivergences::zero))),
            new Listed("null and missing", d -> d.kind().equals("match") && contains(d.operation(), BsonValue::isNull)),
            new Listed("a path through an array or a value", EmbeddedServerDivergences::throughArray),
            new Listed("arrays and documents compared", d -> reached(d).stream().anyMatch(
                    v -> v.isArray() || v.isDocument()) || operands(d).stream().anyMatch(
                    v -> v.isArray() || v.isDocument())));

    private EmbeddedServerDivergences() {
    }

    static Optional<String> classify(EmbeddedServerDifferentialTest.Divergence d) {
        return LISTED.stream().filter(l -> l.covers().test(d)).map(Listed::name).findFirst();
    }

    /** The names of every row, in order. */
    static List<String> names() {
        return LISTED.stream().map(Listed::name).distinct().toList();
    }

    private static boolean arithmetic(EmbeddedServerDifferentialTest.Divergence d) {
        return d.kind().equals("update") && ARITHMETIC.contains(d.operation().getFirstKey());
    }

    /** The field the case filters or updates (an update's fields, all of them). */
    private static List<String> paths(EmbeddedServerDifferentialTest.Divergence d) {
        BsonDocument op = d.operation();
        if (d.kind().equals("update")) {
            return new ArrayList<>(op.getDocument(op.getFirstKey()).keySet());
        }
        return new ArrayList<>(op.keySet());
    }

    /** The operands the case's operation carries. */
    private static List<BsonValue> operands(EmbeddedServerDifferentialTest.Divergence d) {
        List<BsonValue> out = new ArrayList<>();
        BsonDocument op = d.operation();
        BsonDocument fields = d.kind().equals("update") ? op.getDocument(op.getFirstKey()) : op;
        for (BsonValue v : fields.values()) {
            if (v.isDocument() && !v.asDocument().isEmpty() && v.asDocument().getFirstKey().startsWith("$")) {
                for (Map.Entry<String, BsonValue> e : v.asDocument().entrySet()) {
                    BsonValue operand = e.getValue();
                    if (operand.isDocument() && !operand.asDocument().isEmpty()
                            && operand.asDocument().getFirstKey().startsWith("$")) {
                        out.addAll(operand.asDocument().values());
                    } else if (operand.isArray() && (e.getKey().equals("$in") || e.getKey().equals("$nin"))) {
                        out.addAll(operand.asArray());
                    } else {
                        out.add(operand);
                    }
                }
            } else {
                out.add(v);
            }
        }
        return out;
    }

    /** What the document holds on the case's paths, through arrays as a query reaches (the arrays themselves too). */
    private static List<BsonValue> reached(EmbeddedServerDifferentialTest.Divergence d) {
        List<BsonValue> out = new ArrayList<>();
        for (String path : paths(d)) {
            reach(d.document(), path.split("\\.", -1), 0, out);
        }
        return out;
    }

    private static void reach(BsonValue at, String[] path, int i, List<BsonValue> out) {
        if (i == path.length) {
            out.add(at);
            if (at.isArray()) {
                out.addAll(at.asArray());
            }
            return;
        }
        if (at.isDocument() && at.asDocument().containsKey(path[i])) {
            reach(at.asDocument().get(path[i]), path, i + 1, out);
        } else if (at.isArray()) {
            for (BsonValue element : at.asArray()) {
                reach(element, path, i, out);
            }
        }
    }

    private static boolean throughArray(EmbeddedServerDifferentialTest.Divergence d) {
        for (String path : paths(d)) {
            String[] parts = path.split("\\.", -1);
            BsonValue at = d.document();
            for (int i = 0; i < parts.length - 1 && at != null; i++) {
                at = at.isDocument() ? at.asDocument().get(parts[i]) : null;
                if (at != null && !at.isDocument()) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The operands and what the document holds on the case's paths, every value nested in them too. */
    private static List<BsonValue> values(EmbeddedServerDifferentialTest.Divergence d) {
        List<BsonValue> out = new ArrayList<>();
        operands(d).forEach(v -> flatten(v, out));
        reached(d).forEach(v -> flatten(v, out));
        return out;
    }

    private static void flatten(BsonValue v, List<BsonValue> out) {
        out.add(v);
        if (v.isArray()) {
            v.asArray().forEach(e -> flatten(e, out));
        } else if (v.isDocument()) {
            v.asDocument().values().forEach(e -> flatten(e, out));
        }
    }

    private static boolean contains(BsonValue v, Predicate<BsonValue> p) {
        List<BsonValue> all = new ArrayList<>();
        flatten(v, all);
        return all.stream().anyMatch(p);
    }

    private static boolean nan(BsonValue v) {
        return (v.isDouble() && Double.isNaN(v.asDouble().getValue()))
                || (v.isDecimal128() && v.asDecimal128().getValue().isNaN());
    }

    /** Two numbers of different types that compare equal (an int 1 and a decimal 1.0). */
    private static boolean equalNumbers(BsonValue a, BsonValue b) {
        boolean numbers = (a.isNumber() || a.isDecimal128()) && (b.isNumber() || b.isDecimal128());
        return numbers && a.getBsonType() != b.getBsonType() && !nan(a) && !nan(b)
                && number(a).doubleValue() == number(b).doubleValue();
    }

    private static Number number(BsonValue v) {
        return v.isDecimal128() ? v.asDecimal128().getValue().doubleValue() : v.asNumber().doubleValue();
    }

    private static boolean zero(BsonValue v) {
        return (v.isNumber() && v.asNumber().doubleValue() == 0)
                || (v.isDecimal128() && v.asDecimal128().getValue().toString().matches("-?0(\\.0*)?(E.*)?"));
    }

    /** A number a double does not hold exactly: a long past 2^53, a decimal with more digits or out of range. */
    private static boolean inexact(BsonValue v) {
        if (v.isInt64()) {
            long l = v.asInt64().getValue();
            return l == Long.MAX_VALUE || l == Long.MIN_VALUE || (long) (double) l != l;
        }
        if (v.isDecimal128()) {
            Decimal128 d = v.asDecimal128().getValue();
            if (d.isNaN() || d.isInfinite() || (d.isNegative() && d.toString().matches("-0(\\.0*)?(E.*)?"))) {
                return false;   // no BigDecimal holds these; NaN and the infinities are doubles, -0 too
            }
            BigDecimal exact = d.bigDecimalValue();
            double asDouble = exact.doubleValue();
            return Double.isInfinite(asDouble) || new BigDecimal(asDouble).compareTo(exact) != 0;
        }
        return false;
    }

    /** An integral {@code $inc} or {@code $mul} whose result leaves the range of a long. */
    private static boolean overflows(EmbeddedServerDifferentialTest.Divergence d) {
        BsonDocument op = d.operation();
        BsonDocument fields = op.getDocument(op.getFirstKey());
        for (Map.Entry<String, BsonValue> e : fields.entrySet()) {
            BsonValue current = d.document().get(e.getKey());
            if (current == null || !(current.isInt32() || current.isInt64())
                    || !(e.getValue().isInt32() || e.getValue().isInt64())) {
                continue;
            }
            BigDecimal a = BigDecimal.valueOf(current.asNumber().longValue());
            BigDecimal b = BigDecimal.valueOf(e.getValue().asNumber().longValue());
            BigDecimal r = op.containsKey("$inc") ? a.add(b) : a.multiply(b);
            if (r.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0
                    || r.compareTo(BigDecimal.valueOf(Long.MIN_VALUE)) < 0) {
                return true;
            }
        }
        return false;
    }
}
