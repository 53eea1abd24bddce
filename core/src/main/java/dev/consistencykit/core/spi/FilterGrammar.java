package dev.consistencykit.core.spi;

import java.util.Map;
import java.util.Set;

import org.bson.BsonDocument;
import org.bson.BsonInvalidOperationException;
import org.bson.BsonSerializationException;
import org.bson.BsonValue;
import org.bson.codecs.configuration.CodecConfigurationException;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;

import dev.consistencykit.core.InvalidInputException;

/**
 * The filter grammar a pattern accepts from its callers: query operators that compare values, never an operator that
 * runs code on the server ({@code $where}, {@code $function}, {@code $accumulator}, {@code $expr}). Each failure is an
 * {@link InvalidInputException}.
 *
 * <p>Stateless and thread-safe.
 */
public final class FilterGrammar {

    private FilterGrammar() {
    }

    private static final Set<String> PULL_OPERATORS = Set.of("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in",
            "$nin", "$exists", "$type", "$size", "$all", "$elemMatch", "$and", "$or", "$nor", "$not", "$mod",
            "$regex", "$options");

    private static final Set<String> CODE_OPERATORS = Set.of("$where", "$function", "$accumulator", "$expr");

    /**
     * Checks a caller's own filter (a condition the caller writes on its own document, ANDed with an exact match on
     * the document's id): rendered once with {@code registry}, so what is checked is what is sent; query operators
     * that compare values are allowed, operators that run code ({@code $where}, {@code $function},
     * {@code $accumulator}, {@code $expr}) are not.
     *
     * @return the filter rendered as a {@link BsonDocument}
     * @throws InvalidInputException if it cannot be rendered or is not acceptable
     */
    public static BsonDocument condition(String instanceName, String field, Bson filter, CodecRegistry registry) {
        if (filter == null) {
            throw new InvalidInputException(instanceName, field, field + " must not be null");
        }
        BsonDocument doc = new BsonDocument();
        try {
            filter.toBsonDocument(BsonDocument.class, registry).forEach(doc::append);
        } catch (CodecConfigurationException | BsonInvalidOperationException | BsonSerializationException
                 | IllegalArgumentException | IllegalStateException | ClassCastException e) {
            throw new InvalidInputException(instanceName, field, field + " cannot be rendered with the database's codec"
                    + " registry (" + e.getClass().getSimpleName() + ": " + Values.show(e.getMessage()) + ")");
        }
        checkFilter(instanceName, field, doc, 0);
        Values.checkSize(instanceName, field, doc, Values.MAX_VALUE_BYTES);
        return doc;
    }

    private static void checkFilter(String instanceName, String path, BsonValue value, int depth) {
        if (depth > Values.MAX_DEPTH) {
            throw new InvalidInputException(instanceName, path, path + " nests more than " + Values.MAX_DEPTH + " levels");
        }
        if (value.isDocument()) {
            for (Map.Entry<String, BsonValue> e : value.asDocument().entrySet()) {
                if (CODE_OPERATORS.contains(e.getKey())) {
                    throw new InvalidInputException(instanceName, path, path + ": operator " + e.getKey()
                            + " runs code on the server and is refused");
                }
                Values.checkString(instanceName, path, e.getKey());
                checkFilter(instanceName, path, e.getValue(), depth + 1);
            }
        } else if (value.isArray()) {
            for (BsonValue v : value.asArray()) {
                checkFilter(instanceName, path, v, depth + 1);
            }
        } else if (value.isString()) {
            Values.checkString(instanceName, path, value.asString().getValue());
        }
    }

    /** A $pull condition: query operators that compare values are allowed, operators that run code are not. */
    static void checkCondition(String instanceName, String path, BsonValue value, int depth) {
        if (depth > Values.MAX_DEPTH) {
            throw new InvalidInputException(instanceName, path, path + " nests more than " + Values.MAX_DEPTH + " levels");
        }
        if (value.isDocument()) {
            for (Map.Entry<String, BsonValue> e : value.asDocument().entrySet()) {
                String key = e.getKey();
                if (key.startsWith("$") && !PULL_OPERATORS.contains(key)) {
                    throw new InvalidInputException(instanceName, path, path + ": condition " + Values.show(key)
                            + " is not supported in $pull (use " + PULL_OPERATORS + ")");
                }
                if (key.indexOf('\0') >= 0) {
                    throw new InvalidInputException(instanceName, path, path + ": key must not contain NUL");
                }
                Values.checkString(instanceName, path, key);
                checkCondition(instanceName, path + "." + key, e.getValue(), depth + 1);
            }
        } else if (value.isArray()) {
            for (BsonValue v : value.asArray()) {
                checkCondition(instanceName, path, v, depth + 1);
            }
        } else if (value.isString()) {
            Values.checkString(instanceName, path, value.asString().getValue());
        }
    }
}
