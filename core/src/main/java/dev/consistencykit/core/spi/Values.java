package dev.consistencykit.core.spi;

import java.util.List;
import java.util.Map;

import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.BsonDocumentWriter;
import org.bson.BsonInvalidOperationException;
import org.bson.BsonNull;
import org.bson.BsonSerializationException;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.UuidRepresentation;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.Encoder;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecConfigurationException;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.io.BasicOutputBuffer;

import com.mongodb.MongoClientSettings;

import dev.consistencykit.core.InvalidInputException;

/**
 * User values and MongoDB's limits on them: encoding with the application's codec registry, the checks of a plain
 * value (no operator keys, no unpaired surrogates, not too deep, not too large), the size of an encoded document,
 * and a value shown safely in a message. Each failure is an {@link InvalidInputException} naming the argument.
 *
 * <p>Stateless and thread-safe.
 */
public final class Values {

    private Values() {
    }

    private static final int MAX_SHOWN_VALUE = 80;

    /** MongoDB's limit on one stored document, in bytes. */
    public static final int MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;

    /**
     * The most one user value (a payload, an item, an update) may encode to: the document holding it keeps 64 KiB
     * for the pattern's own fields (markers, states, history), so storing it never crosses {@link #MAX_DOCUMENT_BYTES}.
     */
    public static final int MAX_VALUE_BYTES = MAX_DOCUMENT_BYTES - 64 * 1024;

    /**
     * How deep a user value may nest: MongoDB refuses documents nested deeper than 100 levels, and a pattern stores
     * user values a few levels down.
     */
    public static final int MAX_DEPTH = 90;

    /** Default codecs with standard UUIDs: how ids in stored form, or read back, are encoded without a registry. */
    static final CodecRegistry NEUTRAL = CodecRegistries.withUuidRepresentation(
            MongoClientSettings.getDefaultCodecRegistry(), UuidRepresentation.STANDARD);

    static final EncoderContext ENCODING = EncoderContext.builder().build();

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

    static void checkValue(String instanceName, String path, BsonValue value, int depth) {
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
    static void checkString(String instanceName, String path, String s) {
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
     * Decodes a stored document as {@code type} with {@code registry} (the database's own): how a read hands the
     * application its own record or POJO back. What is stored may have been written by anyone, so a document the
     * type cannot be made from is an error of its own, never a raw codec exception.
     *
     * @param document a {@link Document} or a {@link BsonDocument} as read
     * @throws InvalidInputException if {@code registry} cannot decode it as {@code type}
     */
    public static <T> T decode(String instanceName, String field, Object document, Class<T> type,
                               CodecRegistry registry) {
        java.util.Objects.requireNonNull(type, "type");
        if (type.isInstance(document) && (document instanceof Document || document instanceof BsonDocument)) {
            return type.cast(document);
        }
        BsonValue encoded = encode(instanceName, field, document, registry);
        if (!encoded.isDocument()) {
            throw new InvalidInputException(instanceName, field, field + " is not a document: " + show(document));
        }
        try {
            return registry.get(type).decode(new org.bson.BsonDocumentReader(encoded.asDocument()),
                    org.bson.codecs.DecoderContext.builder().build());
        } catch (CodecConfigurationException | BsonInvalidOperationException | BsonSerializationException
                 | IllegalArgumentException | IllegalStateException | ClassCastException e) {
            throw new InvalidInputException(instanceName, field, field + " cannot be read as " + type.getName()
                    + " with the database's codec registry (" + e.getClass().getSimpleName() + ": "
                    + show(e.getMessage()) + "): " + show(document));
        }
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
     * The value at a dotted {@code path} of a document read back: through documents by name and through arrays by a
     * numeric segment (a name on an array gives the list of its elements' values); {@code null} where the path leads
     * nowhere. Never throws, whatever the document holds. It reads a value; it does not evaluate a query, whose
     * semantics on arrays and types are the server's (ask the server for those).
     */
    public static Object at(Document document, String path) {
        Object current = document;
        for (String segment : path.split("\\.", -1)) {
            if (current instanceof Map<?, ?> map) {
                current = map.get(segment);
            } else if (current instanceof List<?> list) {
                if (!segment.isEmpty() && segment.chars().allMatch(Character::isDigit)) {
                    int i = segment.length() > 9 ? Integer.MAX_VALUE : Integer.parseInt(segment);
                    current = i < list.size() ? list.get(i) : null;
                } else {
                    current = list.stream().map(e -> e instanceof Map<?, ?> m ? m.get(segment) : null).toList();
                }
            } else {
                return null;
            }
        }
        return current;
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
