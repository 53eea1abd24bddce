package dev.consistencykit.core.spi;

import java.math.BigDecimal;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;

import com.google.common.base.Utf8;

import dev.consistencykit.core.InvalidInputException;

/**
 * Ids: the checks of an operation's id and of a document's id, and MongoDB's equality of ids ({@code 1} and
 * {@code 1L} are one id, {@code "1"} and {@code 1} two), by which patterns compare and order the ids they hold. Each
 * failure is an {@link InvalidInputException} naming the argument and the value.
 *
 * <p>Stateless and thread-safe.
 */
public final class Ids {

    private Ids() {
    }

    /**
     * The most an id (of an operation, or of a document an operation touches) may encode to, in bytes: a string's
     * UTF-8 bytes, any other value's BSON. A pattern stores an id in every document the operation touches (markers,
     * participant lists, log entries) and in every log line and message, so it stays small: 1 KiB, the index key limit
     * of the MongoDB versions that still have one. The widest key a pattern builds of several ids, an item version's
     * {@code _id} (its root's and its item's), stays near 2.1 KB, under the 2,704 bytes the real engine's primary key
     * holds ({@code IdsAtTheLimitTest} runs every pattern with every id at this limit on both servers).
     */
    public static final int MAX_ID_BYTES = 1024;

    /**
     * Checks a document id given in stored form or read back from the database, without a codec registry: any
     * value {@link #documentId(String, String, Object, CodecRegistry)} accepts, once it is a type the driver's default
     * codecs (with standard UUIDs) encode: strings, numbers, {@link ObjectId}, {@link java.util.UUID},
     * {@link org.bson.types.Binary}, {@link org.bson.types.Decimal128}, dates, booleans, documents, maps and BSON
     * values.
     *
     * @param instanceName the validating instance, for the message; may be {@code null}
     * @param field        the argument's name, for the message
     * @param id           the value to check
     * @return {@code id}
     * @throws InvalidInputException if it is not acceptable
     */
    public static Object documentId(String instanceName, String field, Object id) {
        if (id == null) {
            throw new InvalidInputException(instanceName, field, field + " must not be null");
        }
        checkId(instanceName, field, id, Values.encode(instanceName, field, id, Values.NEUTRAL));
        return id;
    }

    /**
     * Checks a document id given by a caller, as the database will store it: {@code id} is encoded with
     * {@code registry} (the database's own codec registry, so a {@link java.util.UUID}, a POJO or any type the caller's
     * client can store is accepted) and the result must be a BSON value MongoDB accepts as {@code _id} that cannot act
     * as an operator: not an array, undefined, null, a regular expression or NaN; a string not blank and valid
     * UTF-16; a document with no key that starts with {@code $} or contains {@code .} or NUL, and no symbol, code,
     * regular expression, undefined or NaN, at any depth.
     *
     * @return {@code id} itself when it is an immutable value every registry stores alike (a string, a number, an
     *         {@link ObjectId}, a {@link Decimal128}, a boolean); otherwise the encoded {@link BsonValue}, so what is
     *         stored and matched later is exactly what was checked
     * @throws InvalidInputException if it is not acceptable
     */
    public static Object documentId(String instanceName, String field, Object id, CodecRegistry registry) {
        if (id == null) {
            throw new InvalidInputException(instanceName, field, field + " must not be null");
        }
        BsonValue encoded = Values.encode(instanceName, field, id, registry);
        checkId(instanceName, field, id, encoded);
        if (id instanceof String || id instanceof Long || id instanceof Integer || id instanceof Short
                || id instanceof Byte || id instanceof Double || id instanceof ObjectId || id instanceof Decimal128
                || id instanceof Boolean) {
            return id;
        }
        return encoded;
    }

    /**
     * Whether {@code value}, read back from a collection others can write, is an operation id
     * ({@link #operationId}): a value that is not is left alone, never put in a filter.
     */
    public static boolean isOperationId(Object value) {
        try {
            operationId(null, "operationId", value);
            return true;
        } catch (InvalidInputException e) {
            return false;
        }
    }

    /** Whether {@code value}, read back, is a document id {@link #documentId(String, String, Object)} accepts. */
    public static boolean isDocumentId(Object value) {
        try {
            documentId(null, "_id", value);
            return true;
        } catch (InvalidInputException e) {
            return false;
        }
    }

    /**
     * Checks an operation id (a transaction, a job, a change set): a non-blank string, an integral number or an
     * {@link ObjectId}. Operation ids are printed, logged and compared across processes, so they stay simple.
     *
     * @return {@code id}
     * @throws InvalidInputException if it is not acceptable
     */
    public static Object operationId(String instanceName, String field, Object id) {
        if (id == null) {
            throw new InvalidInputException(instanceName, field, field + " must not be null");
        }
        if (id instanceof String s) {
            if (s.isBlank()) {
                throw new InvalidInputException(instanceName, field, field + " must not be blank, was " + Values.show(s));
            }
            Values.checkString(instanceName, field, s);
            checkIdBytes(instanceName, field, Utf8.encodedLength(s));
            return id;
        }
        if (id instanceof Long || id instanceof Integer || id instanceof Short || id instanceof Byte
                || id instanceof ObjectId) {
            return id;
        }
        throw new InvalidInputException(instanceName, field, field
                + " must be a string, an integral number or an ObjectId, was " + id.getClass().getSimpleName()
                + " " + Values.show(id));
    }

    private static void checkId(String instanceName, String field, Object id, BsonValue value) {
        if (id instanceof Bson && !(id instanceof Document) && !(id instanceof BsonDocument)) {
            // a filter, an update or a JsonObject names a query, not a document
            throw new InvalidInputException(instanceName, field, field + " must be a value, not a driver "
                    + id.getClass().getSimpleName() + " " + Values.show(id));
        }
        if (value.isString() && value.asString().getValue().isBlank()) {
            throw new InvalidInputException(instanceName, field, field + " must not be blank, was " + Values.show(id));
        }
        String refused = switch (value.getBsonType()) {
            case ARRAY -> "an array (MongoDB refuses arrays as _id)";
            case UNDEFINED -> "undefined";
            case NULL -> "null";
            case REGULAR_EXPRESSION -> "a regular expression (it would match as a pattern)";
            case MIN_KEY, MAX_KEY -> "a min/max key";
            case JAVASCRIPT, JAVASCRIPT_WITH_SCOPE, DB_POINTER, SYMBOL -> "a deprecated or code type";
            case DOUBLE -> Double.isFinite(value.asDouble().getValue()) ? null : "NaN or infinite";
            case DECIMAL128 -> value.asDecimal128().getValue().isFinite() ? null : "NaN or infinite";
            default -> null;
        };
        if (refused == null) {
            refused = nestedRefused(value);
        }
        if (refused != null) {
            throw new InvalidInputException(instanceName, field, field + " must be a BSON value MongoDB accepts as _id"
                    + " and matches exactly, was " + refused + ": " + id.getClass().getSimpleName() + " "
                    + Values.show(id));
        }
        Values.checkValue(instanceName, field, value, 0);
        checkIdBytes(instanceName, field, value.isString() ? Utf8.encodedLength(value.asString().getValue())
                : Values.sizeOf(new BsonDocument("v", value)));
    }

    /**
     * What an id may not hold at any depth: the types whose equality {@link #idKey} would have to guess (a symbol
     * MongoDB compares as a string, NaN equal to NaN across types, a regular expression's flags, code).
     */
    private static String nestedRefused(BsonValue value) {
        return switch (value.getBsonType()) {
            case DOCUMENT -> value.asDocument().values().stream().map(Ids::nestedRefused)
                    .filter(Objects::nonNull).findFirst().orElse(null);
            case ARRAY -> value.asArray().getValues().stream().map(Ids::nestedRefused)
                    .filter(Objects::nonNull).findFirst().orElse(null);
            case UNDEFINED, REGULAR_EXPRESSION, JAVASCRIPT, JAVASCRIPT_WITH_SCOPE, DB_POINTER, SYMBOL ->
                    "a value holding " + value.getBsonType();
            case DOUBLE -> Double.isFinite(value.asDouble().getValue()) ? null : "a value holding NaN or infinity";
            case DECIMAL128 -> value.asDecimal128().getValue().isFinite() ? null : "a value holding NaN or infinity";
            default -> null;
        };
    }

    private static void checkIdBytes(String instanceName, String field, int bytes) {
        if (bytes > MAX_ID_BYTES) {
            throw new InvalidInputException(instanceName, field, field + " encodes to " + bytes + " bytes; an id must"
                    + " stay within " + MAX_ID_BYTES + " bytes (it is stored on every document its operation touches)");
        }
    }

    /**
     * What makes two document ids equal in MongoDB, as a Java value to key maps and sets with: the id encoded with
     * {@code registry}, numbers normalized ({@code 1}, {@code 1L}, {@code 1.0} and {@code Decimal128 1} are one
     * id, as in a MongoDB index), documents compared field by field in their order. Two ids
     * that only print alike ({@code "1"} and {@code 1}) stay different. {@code IdEqualityServerTest} holds this to the
     * server's own unique index.
     *
     * @param id       an id as given, stored or read back
     * @param registry the registry of the collection it belongs to
     * @return a value whose {@code equals} and {@code hashCode} follow MongoDB's equality of ids
     */
    public static BsonValue idKey(Object id, CodecRegistry registry) {
        return normalize(id instanceof BsonValue b ? b : Values.encode(null, "id", id, registry));
    }

    /**
     * An order of document ids consistent with {@link #idKey(Object)}: ids MongoDB holds equal compare as 0, so a
     * {@link java.util.TreeMap} with it finds {@code 1L} under {@code 1}, and never confuses {@code "1"} with
     * {@code 1}.
     */
    public static Comparator<Object> idOrder() {
        return Comparator.comparing(id -> new BsonDocument("k", idKey(id)).toJson());
    }

    /**
     * {@code ids} with each id MongoDB holds equal to an earlier one left out ({@link #idKey}), in their order. Never
     * Java's {@code distinct()}: it holds {@code {b: 2, a: 1}} equal to {@code {a: 1, b: 2}} (a {@link
     * org.bson.Document} compares as a map), which are two ids to the server, and would leave one of them out.
     */
    public static List<Object> distinct(java.util.Collection<?> ids, CodecRegistry registry) {
        java.util.Set<BsonValue> seen = new java.util.HashSet<>();
        List<Object> out = new java.util.ArrayList<>();
        for (Object id : ids) {
            if (seen.add(idKey(id, registry))) {
                out.add(id);
            }
        }
        return out;
    }

    /**
     * A map keyed by document ids as MongoDB tells them apart ({@link #idKey}), in insertion order: the key it gives
     * back is the id as put. Never a {@code HashMap} of raw ids, which holds {@code {b: 2, a: 1}} and {@code {a: 1, b:
     * 2}} as one key and {@code 1} and {@code 1L} as two.
     */
    public static <V> Map<Object, V> idMap(CodecRegistry registry) {
        return new IdMap<>(registry);
    }

    private static final class IdMap<V> extends java.util.AbstractMap<Object, V> {
        private final CodecRegistry registry;
        private final Map<BsonValue, Map.Entry<Object, V>> entries = new java.util.LinkedHashMap<>();

        IdMap(CodecRegistry registry) {
            this.registry = registry;
        }

        @Override
        public V put(Object id, V value) {
            Map.Entry<Object, V> old = entries.put(idKey(id, registry), new java.util.AbstractMap.SimpleEntry<>(id,
                    value));
            return old == null ? null : old.getValue();
        }

        @Override
        public V get(Object id) {
            Map.Entry<Object, V> e = entries.get(idKey(id, registry));
            return e == null ? null : e.getValue();
        }

        @Override
        public boolean containsKey(Object id) {
            return entries.containsKey(idKey(id, registry));
        }

        @Override
        public V remove(Object id) {
            Map.Entry<Object, V> old = entries.remove(idKey(id, registry));
            return old == null ? null : old.getValue();
        }

        @Override
        public java.util.Set<Map.Entry<Object, V>> entrySet() {
            return new java.util.AbstractSet<>() {
                @Override
                public java.util.Iterator<Map.Entry<Object, V>> iterator() {
                    return entries.values().iterator();
                }

                @Override
                public int size() {
                    return entries.size();
                }
            };
        }
    }

    /** {@link #idKey(Object, CodecRegistry)} for ids in stored form or read back (default codecs, standard UUIDs). */
    public static BsonValue idKey(Object id) {
        return idKey(id, Values.NEUTRAL);
    }

    private static BsonValue normalize(BsonValue value) {
        switch (value.getBsonType()) {
            case INT32, INT64, DOUBLE, DECIMAL128 -> {
                BigDecimal number;
                if (value.isDouble()) {
                    double d = value.asDouble().getValue();
                    if (!Double.isFinite(d)) {
                        return value;
                    }
                    number = new BigDecimal(d);
                } else if (value.isDecimal128()) {
                    Decimal128 d = value.asDecimal128().getValue();
                    if (!d.isFinite()) {
                        return value;
                    }
                    // -0 has no BigDecimal form and equals 0 in MongoDB
                    try {
                        number = d.bigDecimalValue();
                    } catch (ArithmeticException negativeZero) {
                        number = BigDecimal.ZERO;
                    }
                } else {
                    number = BigDecimal.valueOf(value.isInt32() ? value.asInt32().getValue()
                            : value.asInt64().getValue());
                }
                number = number.stripTrailingZeros();
                if (number.signum() == 0) {
                    return new BsonInt64(0);
                }
                if (number.scale() <= 0) {
                    try {
                        return new BsonInt64(number.longValueExact());
                    } catch (ArithmeticException tooLarge) {
                        return new BsonString("number:" + number.toPlainString());
                    }
                }
                return new BsonString("number:" + number.toPlainString());
            }
            case STRING -> {
                // a string never equals a number, whatever it reads: keep it apart from the normalized numbers
                return new BsonDocument("s", value);
            }
            case DOCUMENT -> {
                // MongoDB compares documents field by field in their order ({a: 1, b: 2} and {b: 2, a: 1} are two
                // ids), while a BsonDocument's equals ignores the order: keep the fields as a list
                BsonArray fields = new BsonArray();
                value.asDocument().forEach((k, v) -> fields.add(new BsonDocument("k", new BsonString(k))
                        .append("v", normalize(v))));
                return new BsonDocument("d", fields);
            }
            case ARRAY -> {
                BsonArray out = new BsonArray();
                value.asArray().forEach(v -> out.add(normalize(v)));
                return out;
            }
            default -> {
                return value;
            }
        }
    }
}
