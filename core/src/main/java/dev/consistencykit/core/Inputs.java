package dev.consistencykit.core;

import java.util.List;
import java.util.Map;

import java.math.BigDecimal;
import java.util.Comparator;
import java.util.Set;

import org.bson.BsonArray;
import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.BsonDocumentWriter;
import org.bson.BsonInt64;
import org.bson.BsonInvalidOperationException;
import org.bson.BsonNull;
import org.bson.BsonSerializationException;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.UuidRepresentation;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.Encoder;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecConfigurationException;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.bson.io.BasicOutputBuffer;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;

import com.google.common.base.Utf8;

import com.mongodb.MongoClientSettings;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;

/**
 * Input checks every pattern runs before its first write. Each failure is an {@link InvalidInputException}
 * (or {@link UnsafeConfigurationException} for a write concern) whose message names the field and the value.
 *
 * <p>Stateless and thread-safe.
 */
public final class Inputs {

    private static final int MAX_SHOWN_VALUE = 80;

    /** MongoDB's limit on one stored document, in bytes. */
    public static final int MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;

    /**
     * The most one user value (a payload, an item, an update) may encode to: the document holding it keeps 64 KiB
     * for the pattern's own fields (markers, states, history), so storing it never crosses {@link #MAX_DOCUMENT_BYTES}.
     */
    public static final int MAX_VALUE_BYTES = MAX_DOCUMENT_BYTES - 64 * 1024;

    /**
     * The most an id (of an operation, or of a document an operation touches) may encode to, in bytes: a string's
     * UTF-8 bytes, any other value's BSON. A pattern stores an id in every document the operation touches (markers,
     * participant lists, log entries) and in every log line and message, so it stays small: 1 KiB, the index key limit
     * of the MongoDB versions that still have one, which every server therefore accepts in any index.
     */
    public static final int MAX_ID_BYTES = 1024;

    /**
     * How deep a user value may nest: MongoDB refuses documents nested deeper than 100 levels, and a pattern stores
     * user values a few levels down.
     */
    public static final int MAX_DEPTH = 90;

    private static final String UPDATE_OPERATOR_LIST = "$set, $unset, $inc, $mul, $min, $max, $rename, $setOnInsert,"
            + " $currentDate, $push, $addToSet, $pull, $pullAll, $pop, $bit";

    private static final Set<String> UPDATE_OPERATORS = Set.of("$set", "$unset", "$inc", "$mul", "$min", "$max",
            "$rename", "$setOnInsert", "$currentDate", "$push", "$addToSet", "$pull", "$pullAll", "$pop", "$bit");

    private static final Set<String> PUSH_MODIFIERS = Set.of("$each", "$slice", "$sort", "$position");

    private static final Set<String> PULL_OPERATORS = Set.of("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in",
            "$nin", "$exists", "$type", "$size", "$all", "$elemMatch", "$and", "$or", "$nor", "$not", "$mod",
            "$regex", "$options");

    private static final Set<String> CODE_OPERATORS = Set.of("$where", "$function", "$accumulator", "$expr");

    /** Default codecs with standard UUIDs: how ids in stored form, or read back, are encoded without a registry. */
    private static final CodecRegistry NEUTRAL = CodecRegistries.withUuidRepresentation(
            MongoClientSettings.getDefaultCodecRegistry(), UuidRepresentation.STANDARD);

    private static final EncoderContext ENCODING = EncoderContext.builder().build();

    private Inputs() {
    }

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
        checkId(instanceName, field, id, encode(instanceName, field, id, NEUTRAL));
        return id;
    }

    /**
     * Checks a document id given by a caller, as the database will store it: {@code id} is encoded with
     * {@code registry} (the database's own codec registry, so a {@link java.util.UUID}, a POJO or any type the caller's
     * client can store is accepted) and the result must be a BSON value MongoDB accepts as {@code _id} that cannot act
     * as an operator: not an array, undefined, null, a regular expression or NaN; a string not blank and valid
     * UTF-16; a document with no key that starts with {@code $} or contains {@code .} or NUL, at any depth.
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
        BsonValue encoded = encode(instanceName, field, id, registry);
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
                throw new InvalidInputException(instanceName, field, field + " must not be blank, was " + show(s));
            }
            checkString(instanceName, field, s);
            checkIdBytes(instanceName, field, Utf8.encodedLength(s));
            return id;
        }
        if (id instanceof Long || id instanceof Integer || id instanceof Short || id instanceof Byte
                || id instanceof ObjectId) {
            return id;
        }
        throw new InvalidInputException(instanceName, field, field
                + " must be a string, an integral number or an ObjectId, was " + id.getClass().getSimpleName()
                + " " + show(id));
    }

    private static void checkId(String instanceName, String field, Object id, BsonValue value) {
        if (id instanceof Bson && !(id instanceof Document) && !(id instanceof BsonDocument)) {
            // a filter, an update or a JsonObject names a query, not a document
            throw new InvalidInputException(instanceName, field, field + " must be a value, not a driver "
                    + id.getClass().getSimpleName() + " " + show(id));
        }
        if (value.isString() && value.asString().getValue().isBlank()) {
            throw new InvalidInputException(instanceName, field, field + " must not be blank, was " + show(id));
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
        if (refused != null) {
            throw new InvalidInputException(instanceName, field, field + " must be a BSON value MongoDB accepts as _id"
                    + " and matches exactly, was " + refused + ": " + id.getClass().getSimpleName() + " "
                    + show(id));
        }
        checkValue(instanceName, field, value, 0);
        checkIdBytes(instanceName, field, value.isString() ? Utf8.encodedLength(value.asString().getValue())
                : sizeOf(new BsonDocument("v", value)));
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
     * id, as in a MongoDB index), documents compared field by field. Two ids that only print alike ({@code "1"} and
     * {@code 1}) stay different.
     *
     * @param id       an id as given, stored or read back
     * @param registry the registry of the collection it belongs to
     * @return a value whose {@code equals} and {@code hashCode} follow MongoDB's equality of ids
     */
    public static BsonValue idKey(Object id, CodecRegistry registry) {
        return normalize(id instanceof BsonValue b ? b : encode(null, "id", id, registry));
    }

    /**
     * An order of document ids consistent with {@link #idKey(Object)}: ids MongoDB holds equal compare as 0, so a
     * {@link java.util.TreeMap} with it finds {@code 1L} under {@code 1}, and never confuses {@code "1"} with
     * {@code 1}.
     */
    public static Comparator<Object> idOrder() {
        return Comparator.comparing(id -> new BsonDocument("k", idKey(id)).toJson());
    }

    /** {@link #idKey(Object, CodecRegistry)} for ids in stored form or read back (default codecs, standard UUIDs). */
    public static BsonValue idKey(Object id) {
        return idKey(id, NEUTRAL);
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
                BsonDocument out = new BsonDocument();
                value.asDocument().forEach((k, v) -> out.append(k, normalize(v)));
                return out;
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

    /** Whether {@code name} passes {@link #fieldName}: for names read back, which are input again. */
    public static boolean isFieldName(String name) {
        try {
            fieldName(null, "field", name);
            return true;
        } catch (InvalidInputException e) {
            return false;
        }
    }

    /**
     * Whether {@code name} is a collection name the patterns use: a {@linkplain #isFieldName field name} (so no
     * {@code .}, which also keeps {@code system.} collections out).
     */
    public static boolean isCollectionName(String name) {
        return isFieldName(name);
    }

    /**
     * Checks one field name: not blank, not starting with {@code $}, no {@code .} and no NUL character.
     *
     * @return {@code name}
     * @throws InvalidInputException if it is not acceptable
     */
    public static String fieldName(String instanceName, String field, String name) {
        if (name == null) {
            throw new InvalidInputException(instanceName, field, field + " must not be null");
        }
        if (name.isBlank()) {
            throw new InvalidInputException(instanceName, field, field + " must not be blank, was " + show(name));
        }
        if (name.startsWith("$")) {
            throw new InvalidInputException(instanceName, field, field + " must not start with '$', was " + show(name));
        }
        if (name.indexOf('.') >= 0) {
            throw new InvalidInputException(instanceName, field, field + " must not contain '.', was " + show(name));
        }
        if (name.indexOf('\0') >= 0) {
            throw new InvalidInputException(instanceName, field, field + " must not contain NUL, was " + show(name));
        }
        return name;
    }

    /**
     * Checks a dotted field path ({@code author.name}): every segment must pass {@link #fieldName}.
     *
     * @return {@code path}
     * @throws InvalidInputException if it is not acceptable
     */
    public static String fieldPath(String instanceName, String field, String path) {
        if (path == null) {
            throw new InvalidInputException(instanceName, field, field + " must not be null");
        }
        for (String segment : path.split("\\.", -1)) {
            if (segment.isEmpty() || segment.startsWith("$") || segment.indexOf('\0') >= 0 || segment.isBlank()) {
                throw new InvalidInputException(instanceName, field, field
                        + " must be a dotted path of plain field names, was " + show(path));
            }
        }
        return path;
    }

    /**
     * Checks that a document meant to be stored as data has no key that starts with {@code $} or contains
     * {@code .}, at any depth (inside subdocuments and arrays too), using the driver's default codecs.
     *
     * @return {@code document}
     * @throws InvalidInputException if a key is not acceptable
     */
    public static Document plainDocument(String instanceName, String field, Document document) {
        plainDocument(instanceName, field, (Object) document, NEUTRAL);
        return document;
    }

    /**
     * Encodes a document meant to be stored as data with {@code registry} (the database's own, so every value the
     * caller's client can store is accepted) and checks the result as BSON: no key that starts with {@code $} or
     * contains {@code .} or NUL at any depth, strings valid UTF-16 (they would change on the way), at most
     * {@value #MAX_DEPTH} levels deep and at most {@value #MAX_VALUE_BYTES} bytes.
     *
     * @param document a {@link Document}, a {@link Map}, a {@link BsonDocument} or any value {@code registry} encodes
     *                 as a document
     * @return the encoded document: store this, not {@code document}, so what is stored is what was checked
     * @throws InvalidInputException if it cannot be encoded or is not acceptable
     */
    public static BsonDocument plainDocument(String instanceName, String field, Object document,
                                             CodecRegistry registry) {
        if (document == null) {
            throw new InvalidInputException(instanceName, field, field + " must not be null");
        }
        BsonValue encoded = encode(instanceName, field, document, registry);
        if (!encoded.isDocument()) {
            throw new InvalidInputException(instanceName, field, field + " must be a document, was "
                    + encoded.getBsonType() + " " + show(document));
        }
        checkValue(instanceName, field, encoded, 0);
        checkSize(instanceName, field, encoded.asDocument(), MAX_VALUE_BYTES);
        return encoded.asDocument();
    }

    /**
     * Encodes one value meant to be stored as data with {@code registry} and checks it as
     * {@link #plainDocument(String, String, Object, CodecRegistry)} checks a document.
     *
     * @return the encoded value
     * @throws InvalidInputException if it cannot be encoded or is not acceptable
     */
    public static BsonValue plainValue(String instanceName, String field, Object value, CodecRegistry registry) {
        BsonValue encoded = value == null ? BsonNull.VALUE : encode(instanceName, field, value, registry);
        checkValue(instanceName, field, encoded, 0);
        checkSize(instanceName, field, new BsonDocument("v", encoded), MAX_VALUE_BYTES);
        return encoded;
    }

    /**
     * Checks a value already in BSON form (read back, or rendered): keys as in {@link #plainDocument}, strings valid
     * UTF-16, depth bounded.
     *
     * @throws InvalidInputException if it is not acceptable
     */
    public static BsonValue plainValue(String instanceName, String field, BsonValue value) {
        checkValue(instanceName, field, value, 0);
        return value;
    }

    private static void checkValue(String instanceName, String path, BsonValue value, int depth) {
        if (depth > MAX_DEPTH) {
            throw new InvalidInputException(instanceName, path, path + " nests more than " + MAX_DEPTH
                    + " levels of documents and arrays; MongoDB refuses deeper documents");
        }
        switch (value.getBsonType()) {
            case DOCUMENT -> {
                for (Map.Entry<String, BsonValue> entry : value.asDocument().entrySet()) {
                    String key = entry.getKey();
                    if (key.startsWith("$") || key.indexOf('.') >= 0 || key.indexOf('\0') >= 0) {
                        throw new InvalidInputException(instanceName, path, "key " + show(key) + " in " + path
                                + " must not start with '$' or contain '.' or NUL: it would reach the server as an"
                                + " operator or a path");
                    }
                    checkString(instanceName, path, key);
                    checkValue(instanceName, path + "." + key, entry.getValue(), depth + 1);
                }
            }
            case ARRAY -> {
                List<BsonValue> values = value.asArray().getValues();
                for (int i = 0; i < values.size(); i++) {
                    checkValue(instanceName, path + "[" + i + "]", values.get(i), depth + 1);
                }
            }
            case STRING -> checkString(instanceName, path, value.asString().getValue());
            default -> {
            }
        }
    }

    /** Refuses a string holding an unpaired surrogate: BSON stores it as '?', so it would not read back equal. */
    private static void checkString(String instanceName, String path, String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                    continue;
                }
                throw unpaired(instanceName, path, s);
            }
            if (Character.isLowSurrogate(c)) {
                throw unpaired(instanceName, path, s);
            }
        }
    }

    private static InvalidInputException unpaired(String instanceName, String path, String s) {
        return new InvalidInputException(instanceName, path, path + " holds a string with an unpaired UTF-16"
                + " surrogate, which BSON cannot store unchanged, was " + show(s));
    }

    /**
     * Encodes a value in stored form, or read back, with the driver's default codecs and standard UUIDs.
     *
     * @throws InvalidInputException if those codecs cannot encode it
     */
    public static BsonValue encode(String instanceName, String field, Object value) {
        return encode(instanceName, field, value, NEUTRAL);
    }

    /**
     * Encodes {@code value} with {@code registry} as the driver would when sending it.
     *
     * @throws InvalidInputException if the registry cannot encode it
     */
    public static BsonValue encode(String instanceName, String field, Object value, CodecRegistry registry) {
        if (value instanceof BsonValue b) {
            return b;
        }
        BsonDocument holder = new BsonDocument();
        try {
            BsonDocumentWriter writer = new BsonDocumentWriter(holder);
            writer.writeStartDocument();
            writer.writeName("v");
            @SuppressWarnings("unchecked")
            Encoder<Object> encoder = (Encoder<Object>) registry.get(value.getClass());
            ENCODING.encodeWithChildContext(encoder, writer, value);
            writer.writeEndDocument();
        } catch (CodecConfigurationException | BsonInvalidOperationException | BsonSerializationException
                 | IllegalArgumentException | IllegalStateException | ClassCastException e) {
            throw new InvalidInputException(instanceName, field, field + " cannot be stored with the database's codec"
                    + " registry (" + e.getClass().getSimpleName() + ": " + show(e.getMessage()) + "), was "
                    + value.getClass().getSimpleName() + " " + show(value));
        }
        return holder.get("v");
    }

    /**
     * Checks that {@code document} encodes to at most {@code limit} bytes, before it is sent.
     *
     * @throws InvalidInputException if it is larger
     */
    public static BsonDocument checkSize(String instanceName, String field, BsonDocument document, int limit) {
        int size = sizeOf(document);
        if (size > limit) {
            throw new InvalidInputException(instanceName, field, field + " encodes to " + size + " bytes; it must stay"
                    + " under " + limit + " bytes so that the document holding it, with the pattern's own fields,"
                    + " stays under MongoDB's " + MAX_DOCUMENT_BYTES + "-byte limit");
        }
        return document;
    }

    /** The encoded size of {@code document} in bytes. */
    public static int sizeOf(BsonDocument document) {
        try (BasicOutputBuffer buffer = new BasicOutputBuffer()) {
            new BsonDocumentCodec().encode(new BsonBinaryWriter(buffer), document, ENCODING);
            return buffer.getPosition();
        }
    }

    /**
     * Checks an update specification with the driver's default codecs; see
     * {@link #updateSpec(String, String, Bson, CodecRegistry)}.
     */
    public static BsonDocument updateSpec(String instanceName, String field, Bson update) {
        return updateSpec(instanceName, field, update, NEUTRAL);
    }

    /**
     * Checks an update specification, rendered with {@code registry} (the database's own, so values of any type the
     * caller's client stores are accepted): not empty; every top-level key one of the update operators
     * {@value #UPDATE_OPERATOR_LIST}; every target a dotted path of plain field names (the all-elements positional
     * {@code $[]} allowed); values that are data carry no key starting with {@code $} ({@code $push} and
     * {@code $addToSet} may use their {@code $each}, {@code $slice}, {@code $sort} and {@code $position} modifiers;
     * {@code $pull} conditions may use query operators that match values, never code); {@code $inc} and {@code $mul}
     * take numbers; the whole update is at most {@value #MAX_VALUE_BYTES} bytes.
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
                    + " registry (" + e.getClass().getSimpleName() + ": " + show(e.getMessage()) + ")");
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
                    + ", was " + show(doc.toJson()));
        }
        for (Map.Entry<String, BsonValue> entry : doc.entrySet()) {
            String op = entry.getKey();
            if (!UPDATE_OPERATORS.contains(op)) {
                throw new InvalidInputException(instanceName, field, field + ": operator " + show(op)
                        + " is not supported (use one of " + UPDATE_OPERATOR_LIST + ")");
            }
            if (!entry.getValue().isDocument() || entry.getValue().asDocument().isEmpty()) {
                throw new InvalidInputException(instanceName, field, field + ": operator " + op
                        + " must take a non-empty document, was " + show(entry.getValue()));
            }
            for (Map.Entry<String, BsonValue> target : entry.getValue().asDocument().entrySet()) {
                String path = target.getKey();
                updatePath(instanceName, field, op, path);
                checkOperand(instanceName, field + "." + op + "." + path, op, target.getValue());
            }
        }
        checkSize(instanceName, field, doc, MAX_VALUE_BYTES);
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
                                + " must not touch " + show(path) + ", a field " + (root.equals("_id")
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
                    + " plain field names, was " + show(path));
        }
        checkString(instanceName, field, path);
    }

    private static void checkOperand(String instanceName, String path, String op, BsonValue value) {
        switch (op) {
            case "$inc", "$mul" -> {
                if (!value.isNumber() && !value.isDecimal128()) {
                    throw new InvalidInputException(instanceName, path, path + " needs a number, was " + show(value));
                }
                boolean finite = value.isDouble() ? Double.isFinite(value.asDouble().getValue())
                        : !value.isDecimal128() || value.asDecimal128().getValue().isFinite();
                if (!finite) {
                    throw new InvalidInputException(instanceName, path, path + " needs a finite number, was "
                            + show(value));
                }
            }
            case "$rename" -> {
                if (!value.isString()) {
                    throw new InvalidInputException(instanceName, path, path + " needs a field name, was "
                            + show(value));
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
                            + "\"timestamp\"}, was " + show(value));
                }
            }
            case "$pop" -> {
                if (!value.isNumber() || Math.abs(value.asNumber().doubleValue()) != 1) {
                    throw new InvalidInputException(instanceName, path, path + " takes 1 or -1, was " + show(value));
                }
            }
            case "$bit" -> {
                boolean ok = value.isDocument() && !value.asDocument().isEmpty() && value.asDocument().entrySet()
                        .stream().allMatch(e -> Set.of("and", "or", "xor").contains(e.getKey())
                                && (e.getValue().isInt32() || e.getValue().isInt64()));
                if (!ok) {
                    throw new InvalidInputException(instanceName, path, path + " takes {and|or|xor: integer}, was "
                            + show(value));
                }
            }
            case "$push", "$addToSet" -> {
                if (value.isDocument() && value.asDocument().containsKey("$each")) {
                    for (Map.Entry<String, BsonValue> modifier : value.asDocument().entrySet()) {
                        if (!PUSH_MODIFIERS.contains(modifier.getKey())) {
                            throw new InvalidInputException(instanceName, path, path + ": modifier "
                                    + show(modifier.getKey()) + " is not supported (use " + PUSH_MODIFIERS + ")");
                        }
                    }
                    if (!value.asDocument().get("$each").isArray()) {
                        throw new InvalidInputException(instanceName, path, path + ".$each needs an array");
                    }
                    checkValue(instanceName, path + ".$each", value.asDocument().get("$each"), 1);
                    BsonValue sort = value.asDocument().get("$sort");
                    if (sort != null && sort.isDocument()) {
                        sort.asDocument().keySet().forEach(k -> updatePath(instanceName, path + ".$sort", op, k));
                    }
                } else {
                    checkValue(instanceName, path, value, 0);
                }
            }
            case "$pull" -> checkCondition(instanceName, path, value, 0);
            default -> checkValue(instanceName, path, value, 0);
        }
    }

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
                    + " registry (" + e.getClass().getSimpleName() + ": " + show(e.getMessage()) + ")");
        }
        checkFilter(instanceName, field, doc, 0);
        checkSize(instanceName, field, doc, MAX_VALUE_BYTES);
        return doc;
    }

    private static void checkFilter(String instanceName, String path, BsonValue value, int depth) {
        if (depth > MAX_DEPTH) {
            throw new InvalidInputException(instanceName, path, path + " nests more than " + MAX_DEPTH + " levels");
        }
        if (value.isDocument()) {
            for (Map.Entry<String, BsonValue> e : value.asDocument().entrySet()) {
                if (CODE_OPERATORS.contains(e.getKey())) {
                    throw new InvalidInputException(instanceName, path, path + ": operator " + e.getKey()
                            + " runs code on the server and is refused");
                }
                checkString(instanceName, path, e.getKey());
                checkFilter(instanceName, path, e.getValue(), depth + 1);
            }
        } else if (value.isArray()) {
            for (BsonValue v : value.asArray()) {
                checkFilter(instanceName, path, v, depth + 1);
            }
        } else if (value.isString()) {
            checkString(instanceName, path, value.asString().getValue());
        }
    }

    /** A $pull condition: query operators that compare values are allowed, operators that run code are not. */
    private static void checkCondition(String instanceName, String path, BsonValue value, int depth) {
        if (depth > MAX_DEPTH) {
            throw new InvalidInputException(instanceName, path, path + " nests more than " + MAX_DEPTH + " levels");
        }
        if (value.isDocument()) {
            for (Map.Entry<String, BsonValue> e : value.asDocument().entrySet()) {
                String key = e.getKey();
                if (key.startsWith("$") && !PULL_OPERATORS.contains(key)) {
                    throw new InvalidInputException(instanceName, path, path + ": condition " + show(key)
                            + " is not supported in $pull (use " + PULL_OPERATORS + ")");
                }
                if (key.indexOf('\0') >= 0) {
                    throw new InvalidInputException(instanceName, path, path + ": key must not contain NUL");
                }
                checkString(instanceName, path, key);
                checkCondition(instanceName, path + "." + key, e.getValue(), depth + 1);
            }
        } else if (value.isArray()) {
            for (BsonValue v : value.asArray()) {
                checkCondition(instanceName, path, v, depth + 1);
            }
        } else if (value.isString()) {
            checkString(instanceName, path, value.asString().getValue());
        }
    }

    /**
     * The array {@code field} of a document read back from a collection users write: its elements, or an empty list if
     * the field is missing or holds anything else (never a {@link ClassCastException} from a foreign value).
     */
    public static List<?> arrayOf(Document document, String field) {
        return document != null && document.get(field) instanceof List<?> list ? list : List.of();
    }

    /**
     * Checks that an amount is strictly positive.
     *
     * @return {@code value}
     * @throws InvalidInputException if it is zero or negative
     */
    public static long positive(String instanceName, String field, long value) {
        if (value <= 0) {
            throw new InvalidInputException(instanceName, field, field + " must be > 0, was " + value);
        }
        return value;
    }

    /**
     * Refuses an unacknowledged write concern ({@code w:0}): with it the server may silently drop a write,
     * and no outcome can be classified.
     *
     * @return {@code writeConcern}
     * @throws UnsafeConfigurationException if it is unacknowledged
     */
    public static WriteConcern acknowledged(String instanceName, WriteConcern writeConcern) {
        if (writeConcern == null) {
            throw new UnsafeConfigurationException(instanceName, "write concern must not be null");
        }
        if (!writeConcern.isAcknowledged()) {
            throw new UnsafeConfigurationException(instanceName, "unacknowledged write concern " + writeConcern
                    + " is refused: with w:0 the server may drop writes silently and no outcome can be"
                    + " classified; use WriteConcern.ACKNOWLEDGED or MAJORITY");
        }
        return writeConcern;
    }

    /** {@link #acknowledged(String, WriteConcern)} for a database's write concern. */
    public static MongoDatabase acknowledged(String instanceName, MongoDatabase database) {
        acknowledged(instanceName, database.getWriteConcern());
        return database;
    }

    /** {@link #acknowledged(String, WriteConcern)} for a collection's write concern. */
    public static <T> MongoCollection<T> acknowledged(String instanceName, MongoCollection<T> collection) {
        acknowledged(instanceName, collection.getWriteConcern());
        return collection;
    }

    /**
     * A value rendered for an error message: control characters escaped ({@code \\n}, {@code \\u0000}…), so a value
     * cannot forge log lines, and shortened if long.
     */
    public static String show(Object value) {
        String s = value instanceof String str ? "'" + str + "'" : String.valueOf(value);
        StringBuilder out = new StringBuilder(Math.min(s.length(), MAX_SHOWN_VALUE) + 8);
        for (int i = 0; i < s.length() && out.length() < MAX_SHOWN_VALUE; i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (Character.isISOControl(c) || Character.isSurrogate(c) || c == '\u2028' || c == '\u2029') {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.length() >= MAX_SHOWN_VALUE && out.length() < s.length() + 2 ? out + "…" : out.toString();
    }
}
