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
import dev.consistencykit.core.UnsafeConfigurationException;

/**
 * The unique indexes and the collection placements an instance's safety rests on, checked against the server before
 * the instance's first write.
 *
 * <p>A unique index is what makes two writers of the same sequence number, dedupe key or version collide; without it
 * both writes succeed and the data is silently wrong. An application that forgot {@code ensureIndexes()} (or whose
 * operator dropped an index) must therefore be refused, not trusted: {@link #verify()} lists the indexes of each
 * collection once per instance and throws {@link MissingIndexException} naming the index and
 * {@code ensureIndexes()} when one is absent, not unique, or weakened by a partial filter. After one successful
 * check (or {@link #create()}) it costs a volatile read.
 *
 * <p>Sharding breaks the same guarantees without a word from some servers: the distributed DocumentDB (Azure Cosmos DB
 * for MongoDB vCore) accepts a unique index not led by the shard key and keeps it unique only among documents with
 * the same shard-key value, and keeps {@code _id} unique only that way too; a {@code findOneAndUpdate} without the
 * shard key is refused. So {@link #verify()} also reads how each collection is sharded (one {@code listCollections},
 * whose {@code info.shardKey} that engine fills; on a MongoDB {@code mongos}, {@code collStats}) and throws
 * {@link UnsafeConfigurationException} naming the collection, the index or the write, the shard key and the fix when
 * a required unique index is not led by the shard key, or a {@link Placement} is broken. MongoDB does not tell a
 * database's user a collection's shard key: there a collection that must stay unsharded is checked, and one whose key
 * must start with a given field is logged at WARN once, unchecked (MongoDB itself refuses a unique index not led by
 * the shard key).
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

    /**
     * Where a collection may live on a sharded cluster for the instance's writes to stay safe and answered.
     *
     * @param collection the collection
     * @param keyFields  the fields its shard key may start with; empty when it must not be sharded at all
     * @param needs      what the instance does there that another placement breaks, for messages ("claims the
     *                   next job with findOneAndUpdate by state and due time")
     */
    public record Placement(MongoCollection<?> collection, List<String> keyFields, String needs) {

        /** Copies the list. */
        public Placement {
            Objects.requireNonNull(collection, "collection");
            keyFields = List.copyOf(keyFields);
            Objects.requireNonNull(needs, "needs");
        }

        /** {@code collection} must not be sharded, because the instance {@code needs} it. */
        public static Placement unsharded(MongoCollection<?> collection, String needs) {
            return new Placement(collection, List.of(), needs);
        }

        /** {@code collection} may be sharded only on a key led by {@code _id}, because the instance {@code needs} it. */
        public static Placement byId(MongoCollection<?> collection, String needs) {
            return new Placement(collection, List.of("_id"), needs);
        }

        String name() {
            return collection.getNamespace().getCollectionName();
        }
    }

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(RequiredIndexes.class);

    private final String instanceName;
    private final com.mongodb.client.MongoDatabase database;
    private final List<Unique> indexes;
    private final List<Placement> placements;
    private volatile boolean verified;

    /**
     * @param instanceName the instance whose safety rests on them, for messages
     * @param indexes      the unique indexes; may be empty
     */
    public RequiredIndexes(String instanceName, List<Unique> indexes) {
        this(instanceName, null, indexes, List.of());
    }

    /**
     * @param instanceName the instance whose safety rests on them, for messages
     * @param database     the database of every collection named, where how each is sharded is read
     * @param indexes      the unique indexes; may be empty
     * @param placements   where each collection may live on a sharded cluster; may be empty
     */
    public RequiredIndexes(String instanceName, com.mongodb.client.MongoDatabase database, List<Unique> indexes,
                           List<Placement> placements) {
        this.instanceName = Objects.requireNonNull(instanceName, "instanceName");
        this.database = database;
        this.indexes = List.copyOf(indexes);
        this.placements = List.copyOf(placements);
        if (database == null && !this.placements.isEmpty()) {
            throw new IllegalArgumentException("placements are read from a database");
        }
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
        List<String> sharding = shardingProblems();
        if (!sharding.isEmpty()) {
            throw new UnsafeConfigurationException(instanceName, String.join("; ", sharding)
                    + ". This instance refuses to write there (docs/operations.md, 'Sharded clusters')");
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
        found.addAll(shardingProblems());
        return found;
    }

    /** How one collection is sharded, as far as the server tells. */
    private record Sharded(boolean sharded, Document key) {
        static final Sharded NO = new Sharded(false, null);
    }

    /**
     * What sharding breaks of the required indexes and placements: read from the server now (one
     * {@code listCollections}, and on a {@code mongos} one {@code collStats} per collection).
     */
    private List<String> shardingProblems() {
        java.util.Map<String, MongoCollection<?>> collections = new java.util.LinkedHashMap<>();
        indexes.forEach(i -> collections.put(i.collection().getNamespace().getCollectionName(), i.collection()));
        placements.forEach(p -> collections.put(p.name(), p.collection()));
        if (database == null || collections.isEmpty()) {
            return List.of();
        }
        java.util.Map<String, Sharded> sharded = shardState(collections.keySet());
        List<String> found = new ArrayList<>();
        for (Unique index : indexes) {
            Sharded s = sharded.getOrDefault(index.collection().getNamespace().getCollectionName(), Sharded.NO);
            if (!s.sharded() || s.key() == null) {
                continue;   // unsharded; or a mongos, which refuses a unique index not led by the shard key itself
            }
            String lead = s.key().keySet().iterator().next();
            if (index.unwind() != null || !lead.equals(index.keys().get(0))) {
                found.add(index.describe() + " is not kept unique across shards: the collection is sharded on "
                        + s.key().toJson() + ", and the server keeps a unique index not led by the shard key unique"
                        + " only among documents with the same shard-key value" + (index.unwind() != null
                        ? "; its key is inside the array '" + index.unwind() + "', which no shard key can be: keep '"
                        + index.collection().getNamespace().getCollectionName() + "' unsharded"
                        : "; keep it unsharded, or shard it on {" + index.keys().get(0) + ": \"hashed\"}"));
            }
        }
        for (Placement p : placements) {
            Sharded s = sharded.getOrDefault(p.name(), Sharded.NO);
            if (!s.sharded()) {
                continue;
            }
            if (p.keyFields().isEmpty()) {
                found.add("collection '" + p.name() + "' is sharded" + (s.key() == null ? "" : " on "
                        + s.key().toJson()) + ", and this instance " + p.needs() + ": keep '" + p.name()
                        + "' unsharded");
            } else if (s.key() == null) {
                LOG.warn("[{}] collection '{}' is sharded, and this instance {}: its shard key must start with {},"
                        + " which this server does not tell the database's user; check it", instanceName, p.name(),
                        p.needs(), p.keyFields());
            } else if (!p.keyFields().contains(s.key().keySet().iterator().next())) {
                found.add("collection '" + p.name() + "' is sharded on " + s.key().toJson() + ", and this instance "
                        + p.needs() + ": keep '" + p.name() + "' unsharded, or shard it on a key led by "
                        + String.join(" or ", p.keyFields()) + " ({" + p.keyFields().get(0) + ": \"hashed\"})");
            }
        }
        return found;
    }

    private java.util.Map<String, Sharded> shardState(java.util.Set<String> names) {
        java.util.Map<String, Sharded> state = new java.util.HashMap<>();
        for (Document info : database.listCollections().filter(Filters.in("name", names))) {
            if (info.get("info") instanceof Document i && i.get("shardKey") instanceof Document key
                    && !key.isEmpty()) {
                state.put(info.getString("name"), new Sharded(true, key));
            }
        }
        if (state.size() < names.size() && isMongos()) {
            for (String name : names) {
                if (!state.containsKey(name) && collectionSharded(name)) {
                    state.put(name, new Sharded(true, null));
                }
            }
        }
        return state;
    }

    private boolean isMongos() {
        return "isdbgrid".equals(database.runCommand(new Document("hello", 1)).getString("msg"));
    }

    private boolean collectionSharded(String name) {
        try {
            return Boolean.TRUE.equals(database.runCommand(new Document("collStats", name)).get("sharded"));
        } catch (com.mongodb.MongoCommandException e) {
            return false;   // no such collection yet: nothing sharded
        }
    }

    /**
     * Creates every required index (idempotent), checks how the collections are sharded, then counts this instance as
     * verified.
     *
     * @throws DuplicateDataException        if existing documents already share a key an index must keep unique
     * @throws UnsafeConfigurationException if a collection is sharded in a way that breaks an index or a placement
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
        List<String> sharding = shardingProblems();
        if (!sharding.isEmpty()) {
            throw new UnsafeConfigurationException(instanceName, String.join("; ", sharding)
                    + " (docs/operations.md, 'Sharded clusters')");
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
