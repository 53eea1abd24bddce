package dev.consistencykit.twophase.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;

import com.mongodb.client.model.Filters;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.spi.IncOperands;
import dev.consistencykit.core.spi.IncOverflow;
import dev.consistencykit.core.spi.Names;
import dev.consistencykit.core.spi.UpdateGrammar;
import dev.consistencykit.core.spi.Values;

/**
 * Validates participant updates and preconditions, and stores them in a form a document can hold. An update is
 * stored as a list of {@code {op, path, value}} and a precondition as a list of {@code {path, op, value}}: MongoDB
 * cannot portably store {@code $}-prefixed or dotted keys, and a whitelist of operators keeps every stored spec one
 * that recovery can replay. Rejections are {@link InvalidInputException}s naming the field and the value.
 */
final class SpecCodec {

    static final Set<String> UPDATE_OPERATORS = Set.of("set", "unset", "inc", "mul", "min", "max", "push", "pull",
            "addToSet", "currentDate");
    static final Set<String> CONDITION_OPERATORS = Set.of("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin",
            "exists");

    private final String instanceName;
    private final Set<String> reservedFields;
    private final CodecRegistry registry;

    /**
     * @param instanceName   for messages
     * @param reservedFields fields no spec may touch (the marker arrays); {@code _id} is always reserved
     * @param registry       the database's codec registry: values of every type the caller's client stores are
     *                       accepted
     */
    public SpecCodec(String instanceName, Set<String> reservedFields, CodecRegistry registry) {
        this.instanceName = instanceName;
        this.reservedFields = Set.copyOf(reservedFields);
        this.registry = registry;
    }

    private BsonDocument render(String field, Bson bson) {
        // a condition is a filter: render it once, as the database would, and check that copy
        BsonDocument copy = new BsonDocument();
        try {
            bson.toBsonDocument(BsonDocument.class, registry).forEach(copy::append);
        } catch (RuntimeException e) {
            if (e instanceof InvalidInputException) {
                throw e;
            }
            throw invalid(field, field + " cannot be rendered with the database's codec registry ("
                    + e.getClass().getSimpleName() + ": " + Values.show(e.getMessage()) + ")");
        }
        return copy;
    }

    /** Validates an update and returns its stored form (empty array for none). */
    public BsonArray encodeUpdate(String field, Optional<Bson> update) {
        BsonArray ops = new BsonArray();
        if (update.isEmpty()) {
            return ops;
        }
        BsonDocument doc = UpdateGrammar.updateSpec(instanceName, field, update.get(), registry);
        List<String> paths = new ArrayList<>();
        for (Map.Entry<String, BsonValue> operator : doc.entrySet()) {
            String op = operator.getKey().substring(1);
            if (!UPDATE_OPERATORS.contains(op)) {
                throw invalid(field, field + ": operator " + operator.getKey() + " is not supported (use one of "
                        + UPDATE_OPERATORS.stream().map(o -> "$" + o).sorted().toList() + ")");
            }
            for (Map.Entry<String, BsonValue> target : operator.getValue().asDocument().entrySet()) {
                String path = checkPath(field, target.getKey());
                BsonValue value = target.getValue();
                switch (op) {
                    case "inc", "mul" -> {
                        if (!value.isNumber() && !value.isDecimal128()) {
                            throw invalid(field, field + ": $" + op + " of " + path + " needs a number, was " + value);
                        }
                    }
                    case "currentDate" -> {
                        if (!value.equals(BsonBoolean.TRUE)) {
                            throw invalid(field, field + ": $currentDate of " + path + " takes true, was " + value);
                        }
                    }
                    case "unset" -> value = new BsonString("");
                    default -> checkPlainValue(field, path, value);
                }
                paths.add(path);
                ops.add(new BsonDocument("op", new BsonString(op)).append("path", new BsonString(path))
                        .append("value", value));
            }
        }
        checkNoConflicts(field, paths);
        return ops;
    }

    /** Validates a precondition and returns its stored form (empty array for none). */
    public BsonArray encodeCondition(String field, Optional<Bson> condition) {
        BsonArray conditions = new BsonArray();
        if (condition.isEmpty()) {
            return conditions;
        }
        BsonDocument doc = render(field, condition.get());
        flatten(field, doc, conditions);
        return conditions;
    }

    private void flatten(String field, BsonDocument doc, BsonArray out) {
        for (Map.Entry<String, BsonValue> entry : doc.entrySet()) {
            String key = entry.getKey();
            if (key.equals("$and") && entry.getValue().isArray()) {
                for (BsonValue part : entry.getValue().asArray()) {
                    if (!part.isDocument()) {
                        throw invalid(field, field + ": $and must hold documents, was " + part);
                    }
                    flatten(field, part.asDocument(), out);
                }
                continue;
            }
            if (key.startsWith("$")) {
                throw invalid(field, field + ": top-level operator " + key + " is not supported; a precondition is"
                        + " an AND of field conditions");
            }
            String path = checkPath(field, key);
            BsonValue value = entry.getValue();
            if (value.isDocument() && !value.asDocument().isEmpty()
                    && value.asDocument().keySet().stream().anyMatch(k -> k.startsWith("$"))) {
                for (Map.Entry<String, BsonValue> op : value.asDocument().entrySet()) {
                    String name = op.getKey();
                    if (!name.startsWith("$") || !CONDITION_OPERATORS.contains(name.substring(1))) {
                        throw invalid(field, field + ": condition " + name + " on " + path + " is not supported (use"
                                + " one of " + CONDITION_OPERATORS.stream().map(o -> "$" + o).sorted().toList()
                                + ")");
                    }
                    String o = name.substring(1);
                    if ((o.equals("in") || o.equals("nin")) && !op.getValue().isArray()) {
                        throw invalid(field, field + ": " + name + " on " + path + " needs an array");
                    }
                    if (o.equals("in") || o.equals("nin")) {
                        for (BsonValue v : op.getValue().asArray()) {
                            if (v.isRegularExpression()) {
                                throw invalid(field, field + ": " + name + " on " + path + " holds a regular"
                                        + " expression, which would match as a pattern");
                            }
                        }
                    }
                    checkPlainValue(field, path, op.getValue());
                    out.add(condition(path, o, op.getValue()));
                }
            } else {
                checkPlainValue(field, path, value);
                out.add(condition(path, "eq", value));
            }
        }
    }

    private static BsonDocument condition(String path, String op, BsonValue value) {
        return new BsonDocument("path", new BsonString(path)).append("op", new BsonString(op)).append("value", value);
    }

    private String checkPath(String field, String path) {
        Names.fieldPath(instanceName, field, path);
        String root = path.split("\\.", 2)[0];
        if (root.equals("_id")) {
            throw invalid(field, field + " must not touch _id, was " + path);
        }
        if (reservedFields.contains(root)) {
            throw invalid(field, field + " must not touch the transaction markers, was " + path);
        }
        return path;
    }

    private void checkPlainValue(String field, String path, BsonValue value) {
        Values.plainValue(instanceName, field, value);
        if (value.isDocument()) {
            for (Map.Entry<String, BsonValue> e : value.asDocument().entrySet()) {
                if (e.getKey().startsWith("$") || e.getKey().contains(".")) {
                    throw invalid(field, field + ": value of " + path + " has key '" + e.getKey()
                            + "', which must not start with '$' or contain '.'");
                }
                checkPlainValue(field, path + "." + e.getKey(), e.getValue());
            }
        } else if (value.isArray()) {
            for (BsonValue v : value.asArray()) {
                checkPlainValue(field, path, v);
            }
        }
    }

    private void checkNoConflicts(String field, List<String> paths) {
        for (int i = 0; i < paths.size(); i++) {
            for (int j = 0; j < paths.size(); j++) {
                if (i == j) {
                    continue;
                }
                String a = paths.get(i);
                String b = paths.get(j);
                if (a.equals(b) || b.startsWith(a + ".")) {
                    throw invalid(field, field + " updates " + a + " and " + b
                            + " in one write, which the server refuses");
                }
            }
        }
    }

    private InvalidInputException invalid(String field, String message) {
        return new InvalidInputException(instanceName, field, message);
    }

    // ---- decoding -------------------------------------------------------------------------------------------
    // Stored specs are read in two forms: as encoded here (BSON values, for a transaction this process just
    // validated) and as read back from the server (the driver's Java types). Both are maps; these accessors read
    // either.

    private static String text(Object value) {
        return value instanceof BsonValue b ? b.asString().getValue() : (String) value;
    }

    private static Object java(Object value) {
        if (value instanceof BsonValue b) {
            return switch (b.getBsonType()) {
                case INT32 -> b.asInt32().getValue();
                case INT64 -> b.asInt64().getValue();
                case DOUBLE -> b.asDouble().getValue();
                case DECIMAL128 -> b.asDecimal128().getValue().bigDecimalValue();
                case STRING -> b.asString().getValue();
                case BOOLEAN -> b.asBoolean().getValue();
                case NULL -> null;
                case ARRAY -> b.asArray().stream().map(SpecCodec::java).toList();
                default -> b;
            };
        }
        return value;
    }

    /** The update a stored op list stands for, or {@code null} when it is empty. */
    public static Bson decodeUpdate(List<?> ops) {
        if (ops == null || ops.isEmpty()) {
            return null;
        }
        Map<String, Document> byOperator = new LinkedHashMap<>();
        for (Object o : ops) {
            Map<String, Object> op = asMap(o);
            byOperator.computeIfAbsent("$" + text(op.get("op")), k -> new Document())
                    .append(text(op.get("path")), op.get("value"));
        }
        return new Document(byOperator);
    }

    /** The filter a stored condition list stands for, or {@code null} when it is empty. */
    public static Bson decodeCondition(List<?> conditions) {
        if (conditions == null || conditions.isEmpty()) {
            return null;
        }
        List<Bson> filters = new ArrayList<>();
        for (Object o : conditions) {
            Map<String, Object> c = asMap(o);
            filters.add(new Document(text(c.get("path")), new Document("$" + text(c.get("op")), c.get("value"))));
        }
        return filters.size() == 1 ? filters.get(0) : Filters.and(filters);
    }

    /**
     * The guard that keeps a stored update's integral {@code $inc}s inside a 64-bit integer: for {@code $inc n} on
     * {@code path}, the field is missing or at most {@code Long.MAX_VALUE - n} (at least {@code Long.MIN_VALUE - n}
     * for a negative {@code n}). Without it the server would wrap past the range (the embedded server) or refuse the
     * write after other participants were written (MongoDB). {@code null} when the update has no integral
     * {@code $inc}.
     */
    public static Bson overflowGuard(List<?> ops) {
        return IncOverflow.guard(incs(ops));
    }

    /**
     * The guard that keeps a stored update's {@code $inc}s and {@code $mul}s to fields that hold a plain number
     * ({@link IncOperands}): not an array nor through one, not NaN nor an infinity, not a value that is no number.
     * {@code null} when the update has neither.
     */
    public static Bson operandGuard(List<?> ops) {
        return IncOperands.guard(incs(ops));
    }

    /** Why {@link #operandGuard} refuses {@code document}, read from it; empty if it does not. */
    public static Optional<String> operandOf(List<?> ops, Document document) {
        return IncOperands.refusal(incs(ops), document);
    }

    /**
     * A stored update's {@code $inc}s and {@code $mul}s as an update document, for {@link IncOverflow} (which reads
     * its integral {@code $inc}s) and {@link IncOperands} (every field either changes).
     */
    private static BsonDocument incs(List<?> ops) {
        BsonDocument update = new BsonDocument();
        for (Object o : ops == null ? List.of() : ops) {
            Map<String, Object> op = asMap(o);
            String name = text(op.get("op"));
            if ("inc".equals(name) || "mul".equals(name)) {
                BsonValue fields = update.get("$" + name);
                if (fields == null) {
                    fields = new BsonDocument();
                    update.put("$" + name, fields);
                }
                fields.asDocument().put(text(op.get("path")), Values.encode(null, "value", java(op.get("value"))));
            }
        }
        return update;
    }

    /**
     * What a participant's prepare and commit updates add up to, for the overflow checks of a prepare: the
     * integral {@code $inc}s of both on one path summed (clamped to the 64-bit range), every other op as it is. A
     * prepare guarded by it is refused when the commit that follows would pass the range on that document as it is
     * now, so the transaction is canceled before anything is decided rather than stuck after.
     */
    public static List<Object> throughCommit(List<?> prepare, List<?> commit) {
        Map<String, Long> sums = new LinkedHashMap<>();
        List<Object> others = new ArrayList<>();
        for (List<?> ops : List.of(prepare == null ? List.of() : prepare, commit == null ? List.of() : commit)) {
            for (Object o : ops) {
                Map<String, Object> op = asMap(o);
                Object value = java(op.get("value"));
                if ("inc".equals(text(op.get("op"))) && (value instanceof Integer || value instanceof Long)) {
                    long n = ((Number) value).longValue();
                    sums.merge(text(op.get("path")), n, (a, b) -> {
                        try {
                            return Math.addExact(a, b);
                        } catch (ArithmeticException past) {
                            return a > 0 ? Long.MAX_VALUE : Long.MIN_VALUE;
                        }
                    });
                } else {
                    others.add(o);
                }
            }
        }
        List<Object> combined = new ArrayList<>(others);
        sums.forEach((path, n) -> combined.add(new Document("op", "inc").append("path", path).append("value", n)));
        return combined;
    }

    /**
     * Words the refusal of a stored update's {@link #overflowGuard} by the server, for a cancellation reason (it
     * decides nothing).
     */
    public static String overflowOf(List<?> ops, Document document) {
        return IncOverflow.refusal(incs(ops), document);
    }

    /** A stored condition a document does not satisfy: its path, and how it reads in a message. */
    public record Unmet(String path, String description) {
    }

    /**
     * The first stored condition the server says the document does not satisfy now: each one alone is asked of the
     * server ({@code holds}, a query by the document's id and that condition) in order, so the reason is the server's
     * evaluation, never a Java one (which differs for arrays, nulls, mixed numeric types, NaN). {@code shown} only
     * words it: the value read back at the condition's path.
     */
    public static Optional<Unmet> firstUnmet(List<?> conditions, Predicate<Bson> holds, Document shown) {
        if (conditions == null) {
            return Optional.empty();
        }
        for (Object o : conditions) {
            Map<String, Object> c = asMap(o);
            if (!holds.test(decodeCondition(List.of(c)))) {
                String path = text(c.get("path"));
                return Optional.of(new Unmet(path, path + " " + symbol(text(c.get("op"))) + " "
                        + Values.show(java(c.get("value"))) + " (was " + Values.show(Values.at(shown, path)) + ")"));
            }
        }
        return Optional.empty();
    }

    private static String symbol(String op) {
        return switch (op) {
            case "eq" -> "==";
            case "ne" -> "!=";
            case "gt" -> ">";
            case "gte" -> ">=";
            case "lt" -> "<";
            case "lte" -> "<=";
            default -> op;
        };
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(Object o) {
        return (Map<String, Object>) o;
    }
}
