package dev.consistencykit.core;

import java.util.List;
import java.util.Map;

import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.bson.types.ObjectId;

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

    private Inputs() {
    }

    /**
     * Checks that {@code id} can safely be used as a document {@code _id}: a non-blank string, an integral
     * number ({@code Long}, {@code Integer}, {@code Short}, {@code Byte}) or an {@link ObjectId}. A document, a map,
     * a list or any other type is refused, because it could carry a query operator or match more than intended.
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
        if (id instanceof String s) {
            if (s.isBlank()) {
                throw new InvalidInputException(instanceName, field, field + " must not be blank, was " + show(s));
            }
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
     * {@code .}, at any depth (inside subdocuments and arrays too).
     *
     * @return {@code document}
     * @throws InvalidInputException if a key is not acceptable
     */
    public static Document plainDocument(String instanceName, String field, Document document) {
        if (document == null) {
            throw new InvalidInputException(instanceName, field, field + " must not be null");
        }
        checkKeys(instanceName, field, document);
        return document;
    }

    private static void checkKeys(String instanceName, String path, Object value) {
        if (value instanceof Map<?, ?> map) {
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                String key = String.valueOf(entry.getKey());
                String keyPath = path + "." + key;
                if (key.startsWith("$") || key.indexOf('.') >= 0 || key.indexOf('\0') >= 0) {
                    throw new InvalidInputException(instanceName, path,
                            "key " + show(key) + " in " + path + " must not start with '$' or contain '.'");
                }
                checkKeys(instanceName, keyPath, entry.getValue());
            }
        } else if (value instanceof List<?> list) {
            for (int i = 0; i < list.size(); i++) {
                checkKeys(instanceName, path + "[" + i + "]", list.get(i));
            }
        } else if (value instanceof Object[] array) {
            for (int i = 0; i < array.length; i++) {
                checkKeys(instanceName, path + "[" + i + "]", array[i]);
            }
        } else if (value instanceof Bson bson) {
            // a driver value that is neither a map nor a list (a JsonObject, a filter, an update) is stored as the
            // document it renders: check that document, or it would reach the server as an operator
            BsonDocument rendered;
            try {
                rendered = bson.toBsonDocument(BsonDocument.class, MongoClientSettings.getDefaultCodecRegistry());
            } catch (RuntimeException e) {
                throw new InvalidInputException(instanceName, path, path + " holds a "
                        + value.getClass().getSimpleName() + " that does not render as a document: " + e.getMessage());
            }
            checkKeys(instanceName, path, rendered);
        }
    }

    /**
     * Checks an update specification: not empty, and every top-level key an update operator ({@code $set},
     * {@code $inc}…). A spec that mixes operators with plain fields, or has only plain fields (a replacement),
     * is refused.
     *
     * @return the spec rendered as a {@link BsonDocument}
     * @throws InvalidInputException if it is not acceptable
     */
    public static BsonDocument updateSpec(String instanceName, String field, Bson update) {
        if (update == null) {
            throw new InvalidInputException(instanceName, field, field + " must not be null");
        }
        BsonDocument doc = update.toBsonDocument(BsonDocument.class, MongoClientSettings.getDefaultCodecRegistry());
        if (doc.isEmpty()) {
            throw new InvalidInputException(instanceName, field, field + " must not be empty");
        }
        boolean operators = false;
        boolean plain = false;
        for (Map.Entry<String, BsonValue> entry : doc.entrySet()) {
            if (entry.getKey().startsWith("$")) {
                operators = true;
                if (!entry.getValue().isDocument()) {
                    throw new InvalidInputException(instanceName, field, field + ": operator " + entry.getKey()
                            + " must take a document, was " + show(entry.getValue()));
                }
            } else {
                plain = true;
            }
        }
        if (plain) {
            throw new InvalidInputException(instanceName, field, field + " must use update operators only"
                    + (operators ? " (it mixes operators and plain fields)" : " (it is a replacement document)")
                    + ", was " + show(doc.toJson()));
        }
        return doc;
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

    /** A value rendered for an error message, shortened if long. */
    static String show(Object value) {
        String s = value instanceof String str ? "'" + str + "'" : String.valueOf(value);
        return s.length() > MAX_SHOWN_VALUE ? s.substring(0, MAX_SHOWN_VALUE) + "…" : s;
    }
}
