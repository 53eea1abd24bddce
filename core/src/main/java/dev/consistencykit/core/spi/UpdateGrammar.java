package dev.consistencykit.core.spi;

import java.util.List;
import java.util.Map;
import java.util.Set;

import org.bson.BsonDocument;
import org.bson.BsonInvalidOperationException;
import org.bson.BsonSerializationException;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.codecs.configuration.CodecConfigurationException;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;

import dev.consistencykit.core.InvalidInputException;

/**
 * The update-operator grammar a pattern accepts from its callers: which operators, on which paths, with which
 * operands, so that no user value reaches the server as an operator it did not mean. A {@code $pull} condition is
 * checked by {@link FilterGrammar}. Each failure is an {@link InvalidInputException}.
 *
 * <p>Stateless and thread-safe.
 */
public final class UpdateGrammar {

    private UpdateGrammar() {
    }

    private static final String UPDATE_OPERATOR_LIST = "$set, $unset, $inc, $mul, $min, $max, $rename, $setOnInsert,"
            + " $currentDate, $push, $addToSet, $pull, $pullAll, $pop, $bit";

    private static final Set<String> UPDATE_OPERATORS = Set.of("$set", "$unset", "$inc", "$mul", "$min", "$max",
            "$rename", "$setOnInsert", "$currentDate", "$push", "$addToSet", "$pull", "$pullAll", "$pop", "$bit");

    private static final Set<String> PUSH_MODIFIERS = Set.of("$each", "$slice", "$sort", "$position");

    /**
     * Checks an update specification with the driver's default codecs; see
     * {@link #updateSpec(String, String, Bson, CodecRegistry)}.
     */
    public static BsonDocument updateSpec(String instanceName, String field, Bson update) {
        return updateSpec(instanceName, field, update, Values.NEUTRAL);
    }

    /**
     * Checks an update specification, rendered with {@code registry} (the database's own, so values of any type the
     * caller's client stores are accepted): not empty; every top-level key one of the update operators
     * {@value #UPDATE_OPERATOR_LIST}; every target a dotted path of plain field names (the all-elements positional
     * {@code $[]} allowed); values that are data carry no key starting with {@code $} ({@code $push} and
     * {@code $addToSet} may use their {@code $each}, {@code $slice}, {@code $sort} and {@code $position} modifiers;
     * {@code $pull} conditions may use query operators that match values, never code); {@code $inc} and {@code $mul}
     * take numbers; the whole update is at most {@value Values#MAX_VALUE_BYTES} bytes.
     *
     * @return the spec rendered as a {@link BsonDocument}
     * @throws InvalidInputException if it is not acceptable
     */
    public static BsonDocument updateSpec(String instanceName, String field, Bson update, CodecRegistry registry) {
        if (update == null) {
            throw new InvalidInputException(instanceName, field, field + " must not be null");
        }
        BsonDocument doc;
        try {
            // a Document renders lazily: copy it now, so what is checked is what is sent, and encoding errors land here
            doc = new BsonDocument();
            for (Map.Entry<String, BsonValue> e : update.toBsonDocument(BsonDocument.class, registry).entrySet()) {
                doc.append(e.getKey(), e.getValue());
            }
        } catch (CodecConfigurationException | BsonInvalidOperationException | BsonSerializationException
                 | IllegalArgumentException | IllegalStateException | ClassCastException e) {
            throw new InvalidInputException(instanceName, field, field + " cannot be rendered with the database's codec"
                    + " registry (" + e.getClass().getSimpleName() + ": " + Values.show(e.getMessage()) + ")");
        }
        if (doc.isEmpty()) {
            throw new InvalidInputException(instanceName, field, field + " must not be empty");
        }
        boolean operators = false;
        boolean plain = false;
        for (Map.Entry<String, BsonValue> entry : doc.entrySet()) {
            if (entry.getKey().startsWith("$")) {
                operators = true;
            } else {
                plain = true;
            }
        }
        if (plain) {
            throw new InvalidInputException(instanceName, field, field + " must use update operators only"
                    + (operators ? " (it mixes operators and plain fields)" : " (it is a replacement document)")
                    + ", was " + Values.show(doc.toJson()));
        }
        for (Map.Entry<String, BsonValue> entry : doc.entrySet()) {
            String op = entry.getKey();
            if (!UPDATE_OPERATORS.contains(op)) {
                throw new InvalidInputException(instanceName, field, field + ": operator " + Values.show(op)
                        + " is not supported (use one of " + UPDATE_OPERATOR_LIST + ")");
            }
            if (!entry.getValue().isDocument() || entry.getValue().asDocument().isEmpty()) {
                throw new InvalidInputException(instanceName, field, field + ": operator " + op
                        + " must take a non-empty document, was " + Values.show(entry.getValue()));
            }
            for (Map.Entry<String, BsonValue> target : entry.getValue().asDocument().entrySet()) {
                String path = target.getKey();
                updatePath(instanceName, field, op, path);
                checkOperand(instanceName, field + "." + op + "." + path, op, target.getValue());
            }
        }
        Values.checkSize(instanceName, field, doc, Values.MAX_VALUE_BYTES);
        return doc;
    }

    /**
     * {@link #updateSpec(String, String, Bson, CodecRegistry)}, and no target (nor a {@code $rename} destination)
     * under {@code _id} or under one of {@code reservedFields}, the fields the pattern keeps on the document.
     *
     * @throws InvalidInputException if it is not acceptable
     */
    public static BsonDocument updateSpec(String instanceName, String field, Bson update, CodecRegistry registry,
                                          Set<String> reservedFields) {
        BsonDocument doc = updateSpec(instanceName, field, update, registry);
        for (Map.Entry<String, BsonValue> entry : doc.entrySet()) {
            for (Map.Entry<String, BsonValue> target : entry.getValue().asDocument().entrySet()) {
                List<String> paths = entry.getKey().equals("$rename") && target.getValue().isString()
                        ? List.of(target.getKey(), target.getValue().asString().getValue()) : List.of(target.getKey());
                for (String path : paths) {
                    String root = path.split("\\.", 2)[0];
                    if (root.equals("_id") || reservedFields.contains(root)) {
                        throw new InvalidInputException(instanceName, field, field + ": " + entry.getKey()
                                + " must not touch " + Values.show(path) + ", a field " + (root.equals("_id")
                                ? "MongoDB keeps" : "the pattern keeps (reserved: " + reservedFields + ")"));
                    }
                }
            }
        }
        return doc;
    }

    private static void updatePath(String instanceName, String field, String op, String path) {
        boolean ok = !path.isEmpty() && path.indexOf('\0') < 0;
        if (ok) {
            for (String segment : path.split("\\.", -1)) {
                if (segment.isBlank() || (segment.startsWith("$") && !segment.equals("$[]"))) {
                    ok = false;
                    break;
                }
            }
        }
        if (!ok) {
            throw new InvalidInputException(instanceName, field, field + ": " + op + " target must be a dotted path of"
                    + " plain field names, was " + Values.show(path));
        }
        Values.checkString(instanceName, field, path);
    }

    private static void checkOperand(String instanceName, String path, String op, BsonValue value) {
        switch (op) {
            case "$inc", "$mul" -> {
                if (!value.isNumber() && !value.isDecimal128()) {
                    throw new InvalidInputException(instanceName, path, path + " needs a number, was " + Values.show(value));
                }
                boolean finite = value.isDouble() ? Double.isFinite(value.asDouble().getValue())
                        : !value.isDecimal128() || value.asDecimal128().getValue().isFinite();
                if (!finite) {
                    throw new InvalidInputException(instanceName, path, path + " needs a finite number, was "
                            + Values.show(value));
                }
            }
            case "$rename" -> {
                if (!value.isString()) {
                    throw new InvalidInputException(instanceName, path, path + " needs a field name, was "
                            + Values.show(value));
                }
                updatePath(instanceName, path, op, value.asString().getValue());
            }
            case "$currentDate" -> {
                boolean ok = (value.isBoolean() && value.asBoolean().getValue())
                        || (value.isDocument() && value.asDocument().size() == 1
                        && (new BsonString("date").equals(value.asDocument().get("$type"))
                        || new BsonString("timestamp").equals(value.asDocument().get("$type"))));
                if (!ok) {
                    throw new InvalidInputException(instanceName, path, path + " takes true or {$type: \"date\"|"
                            + "\"timestamp\"}, was " + Values.show(value));
                }
            }
            case "$pop" -> {
                if (!value.isNumber() || Math.abs(value.asNumber().doubleValue()) != 1) {
                    throw new InvalidInputException(instanceName, path, path + " takes 1 or -1, was " + Values.show(value));
                }
            }
            case "$bit" -> {
                boolean ok = value.isDocument() && !value.asDocument().isEmpty() && value.asDocument().entrySet()
                        .stream().allMatch(e -> Set.of("and", "or", "xor").contains(e.getKey())
                                && (e.getValue().isInt32() || e.getValue().isInt64()));
                if (!ok) {
                    throw new InvalidInputException(instanceName, path, path + " takes {and|or|xor: integer}, was "
                            + Values.show(value));
                }
            }
            case "$push", "$addToSet" -> {
                if (value.isDocument() && value.asDocument().containsKey("$each")) {
                    for (Map.Entry<String, BsonValue> modifier : value.asDocument().entrySet()) {
                        if (!PUSH_MODIFIERS.contains(modifier.getKey())) {
                            throw new InvalidInputException(instanceName, path, path + ": modifier "
                                    + Values.show(modifier.getKey()) + " is not supported (use " + PUSH_MODIFIERS + ")");
                        }
                    }
                    if (!value.asDocument().get("$each").isArray()) {
                        throw new InvalidInputException(instanceName, path, path + ".$each needs an array");
                    }
                    Values.checkValue(instanceName, path + ".$each", value.asDocument().get("$each"), 1);
                    BsonValue sort = value.asDocument().get("$sort");
                    if (sort != null && sort.isDocument()) {
                        sort.asDocument().keySet().forEach(k -> updatePath(instanceName, path + ".$sort", op, k));
                    }
                } else {
                    Values.checkValue(instanceName, path, value, 0);
                }
            }
            case "$pull" -> FilterGrammar.checkCondition(instanceName, path, value, 0);
            default -> Values.checkValue(instanceName, path, value, 0);
        }
    }
}
