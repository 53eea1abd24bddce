package dev.consistencykit.core.spi;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.StringJoiner;

import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Projections;

import dev.consistencykit.core.DuplicateDataException;
import dev.consistencykit.core.MissingIndexException;

/**
 * The unique indexes an instance's safety rests on, checked against the server before the instance's first write.
 *
 * <p>A unique index is what makes two writers of the same sequence number, dedupe key or version collide; without it
 * both writes succeed and the data is silently wrong. An application that forgot {@code ensureIndexes()} (or whose
 * operator dropped an index) must therefore be refused, not trusted: {@link #verify()} lists the indexes of each
 * collection once per instance and throws {@link MissingIndexException} naming the index and
 * {@code ensureIndexes()} when one is absent, not unique, or weakened by a partial filter. After one successful
 * check (or {@link #create()}) it costs a volatile read.
 *
 * <p>{@link #create()} builds them; when the data already breaks a rule it throws {@link DuplicateDataException}
 * listing the documents that share a key, so the application knows what to repair.
 *
 * <p>Thread-safe.
 */
public final class RequiredIndexes {

    /** How many groups of duplicates {@link DuplicateDataException} lists. */
    public static final int MAX_REPORTED_DUPLICATES = 10;

    /**
     * One unique index.
     *
     * @param collection the collection that holds it
     * @param name       its name, as {@code ensureIndexes()} creates it
     * @param keys       its keys, ascending ({@code 1}) in this order
     * @param sparse     whether it leaves out documents without the first key
     * @param unwind     the array the keys are inside, for multikey indexes ({@code null} when none): how the
     *                   duplicates of existing data are found
     */
    public record Unique(MongoCollection<?> collection, String name, List<String> keys, boolean sparse,
                         String unwind) {

        /**
         * @throws NullPointerException     if an argument but {@code unwind} is null
         * @throws IllegalArgumentException if there are no keys
         */
        public Unique {
            Objects.requireNonNull(collection, "collection");
            Objects.requireNonNull(name, "name");
            keys = List.copyOf(keys);
            if (keys.isEmpty()) {
                throw new IllegalArgumentException("an index needs at least one key");
            }
        }

        String describe() {
            StringJoiner j = new StringJoiner(", ", "{", "}");
            keys.forEach(k -> j.add(k + ": 1"));
            return "unique index '" + name + "' " + j + " on collection '" + collection.getNamespace()
                    .getCollectionName() + "'";
        }
    }

    private final String instanceName;
    private final List<Unique> indexes;
    private volatile boolean verified;

    /**
     * @param instanceName the instance whose safety rests on them, for messages
     * @param indexes      the unique indexes; may be empty
     */
    public RequiredIndexes(String instanceName, List<Unique> indexes) {
        this.instanceName = Objects.requireNonNull(instanceName, "instanceName");
        this.indexes = List.copyOf(indexes);
    }

    /** The indexes checked. */
    public List<Unique> indexes() {
        return indexes;
    }

    /**
     * Checks, once per instance, that every required index exists on the server as declared. Call it before a write
     * whose safety rests on one of them; after one success it reads a field.
     *
     * @throws MissingIndexException if one is missing, not unique or partial (nothing was written)
     */
    public void verify() {
        if (verified) {
            return;
        }
        for (Unique index : indexes) {
            String problem = problemWith(index);
            if (problem != null) {
                throw new MissingIndexException(instanceName, index.describe() + " " + problem
                        + "; this instance refuses to write without it, because two writers could then both succeed"
                        + " where one must fail. Call ensureIndexes() once at start-up (it is idempotent)");
            }
        }
        verified = true;
    }

    /**
     * Every required index's problem, read from the server now (not the cached verdict of {@link #verify()}): what
     * a health check reports when someone dropped an index after start-up.
     *
     * @return one line per missing, non-unique or partial index; empty when all are there
     */
    public List<String> problems() {
        List<String> found = new java.util.ArrayList<>();
        for (Unique index : indexes) {
            String problem = problemWith(index);
            if (problem != null) {
                found.add(index.describe() + " " + problem);
            }
        }
        return found;
    }

    /**
     * Creates every required index (idempotent), then counts this instance as verified.
     *
     * @throws DuplicateDataException if existing documents already share a key an index must keep unique
     */
    public void create() {
        for (Unique index : indexes) {
            Document keys = new Document();
            index.keys().forEach(k -> keys.append(k, 1));
            try {
                index.collection().createIndex(keys, new IndexOptions().name(index.name()).unique(true)
                        .sparse(index.sparse()));
            } catch (MongoException e) {
                if (MongoErrors.isTransient(e)) {
                    throw e;
                }
                // MongoDB says 11000; DocumentDB says InternalError ("could not create exclusion constraint"). Whether
                // documents share a key is read from the data, not from either answer
                String shared = MongoErrors.isDuplicateKey(e) ? duplicates(index) : duplicatesIfAny(index);
                if (shared == null) {
                    throw e;
                }
                throw new DuplicateDataException(instanceName, index.describe() + " cannot be built: documents"
                        + " already share a key it must keep unique: " + shared
                        + ". Repair them (docs/operations.md, 'Data that breaks a unique index'), then call"
                        + " ensureIndexes() again", e);
            }
        }
        verified = true;
    }

    private static String problemWith(Unique index) {
        for (Document existing : index.collection().listIndexes()) {
            Object key = existing.get("key");
            if (!(key instanceof Document k) || !sameKeys(k, index.keys())) {
                continue;
            }
            if (!Boolean.TRUE.equals(existing.get("unique"))) {
                return "exists as '" + existing.get("name") + "' but is not unique";
            }
            if (existing.containsKey("partialFilterExpression")) {
                return "exists as '" + existing.get("name") + "' but only over part of the collection"
                        + " (partialFilterExpression)";
            }
            return null;
        }
        return "does not exist";
    }

    private static boolean sameKeys(Document key, List<String> keys) {
        if (key.size() != keys.size()) {
            return false;
        }
        int i = 0;
        for (var e : key.entrySet()) {
            if (!e.getKey().equals(keys.get(i++))) {
                return false;
            }
            // ascending or descending serves uniqueness alike; a text or hashed key does not
            if (!(e.getValue() instanceof Number n) || n.doubleValue() == 0) {
                return false;
            }
        }
        return true;
    }

    private static final String NONE_FOUND = "(none found by the check; the server refused the index anyway)";

    /** {@link #duplicates}, or null when no two documents share a key. */
    private static String duplicatesIfAny(Unique index) {
        String found = duplicates(index);
        return found.equals(NONE_FOUND) ? null : found;
    }

    /** Up to {@link #MAX_REPORTED_DUPLICATES} keys held by more than one document, with those documents' ids. */
    static String duplicates(Unique index) {
        List<Bson> pipeline = new ArrayList<>();
        if (index.unwind() != null) {
            pipeline.add(Aggregates.unwind("$" + index.unwind()));
        }
        if (index.sparse()) {
            pipeline.add(Aggregates.match(Filters.exists(index.keys().get(0))));
        }
        Document groupKey = new Document();
        for (int i = 0; i < index.keys().size(); i++) {
            groupKey.append("k" + i, "$" + index.keys().get(i));
        }
        pipeline.add(Aggregates.group(groupKey, Accumulators.sum("n", 1), Accumulators.addToSet("ids", "$_id")));
        pipeline.add(Aggregates.match(Filters.gt("n", 1)));
        pipeline.add(Aggregates.limit(MAX_REPORTED_DUPLICATES));
        pipeline.add(Aggregates.project(Projections.include("ids")));
        StringJoiner found = new StringJoiner("; ");
        MongoCollection<BsonDocument> c = index.collection().withDocumentClass(BsonDocument.class);
        for (BsonDocument group : c.aggregate(pipeline)) {
            BsonDocument key = group.getDocument("_id");
            StringJoiner k = new StringJoiner(", ", "{", "}");
            for (int i = 0; i < index.keys().size(); i++) {
                BsonValue v = key.get("k" + i);
                k.add(index.keys().get(i) + ": " + (v == null ? "missing" : json(v)));
            }
            found.add(k + " held by _id " + json(group.get("ids")));
        }
        return found.length() == 0 ? NONE_FOUND : found.toString();
    }

    private static String json(BsonValue value) {
        String doc = new BsonDocument("v", value).toJson(JsonWriterSettings.builder().outputMode(JsonMode.RELAXED)
                .build());
        return doc.substring(doc.indexOf(':') + 1, doc.length() - 1).trim();
    }
}
