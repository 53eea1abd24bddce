package dev.consistencykit.versioning.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;

import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.codecs.DocumentCodec;
import org.bson.types.ObjectId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;

import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.PatternRegistry;
import dev.consistencykit.core.spi.ReadSettings;
import dev.consistencykit.core.spi.RequiredIndexes;
import dev.consistencykit.versioning.UnknownRootException;
import dev.consistencykit.versioning.VersionState;
import dev.consistencykit.versioning.VersionedStoreConfig;
import dev.consistencykit.versioning.VersionedStoreListener;

/**
 * The versioned store's stored fields, collections and counters, and the helpers every part of the
 * {@link VersionEngine} uses.
 */
final class VersionFields {

    /** Status name of a staged change set. */
    public static final String STAGED = VersionState.STAGED.stored();
    /** Status name of a committed change set. */
    public static final String COMMITTED_STATE = VersionState.COMMITTED.stored();
    /** Status name of an abandoned change set. */
    public static final String ABANDONED_STATE = VersionState.ABANDONED.stored();

    /** Stored {@code until} of an item version no committed version replaced yet. */
    public static final long OPEN = Long.MAX_VALUE;
    /** MongoDB's document size limit (16 MiB on every server version). */
    public static final int MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;
    /** The largest commit meta document accepted: it is stored in the root until the version is settled. */
    public static final int MAX_META_BYTES = 64 * 1024;

    // root fields
    static final String VERSION = "version";
    static final String FLOOR = "floor";
    static final String PENDING = "pending";
    static final String PENDING_AT = "pendingAt";
    static final String PENDING_COUNT = "pendingCount";
    static final String UNSETTLED = "unsettled";
    static final String UNSETTLED_AT = "unsettledAt";
    static final String UNSETTLED_COUNT = "unsettledCount";
    static final String ABANDONED = "abandoned";
    static final String META = "meta";
    static final String COMMITTED_AT = "committedAt";
    // attempt entry fields (pending, unsettled, history)
    static final String CS = "cs";
    static final String ATT = "att";
    static final String BASE = "base";
    static final String V = "v";
    static final String N = "n";
    static final String FP = "fp";
    static final String AT = "at";
    // item version fields
    static final String ROOT = "root";
    static final String ITEM = "item";
    static final String COMMITTED = "committed";
    static final String UNTIL = "until";
    static final String DELETED = "deleted";
    static final String VALUE = "value";

    static final Logger LOG = LoggerFactory.getLogger(VersionEngine.class);
    static final int STAGE_ATTEMPTS = 5;
    static final int SETTLE_BATCH = 256;
    static final DocumentCodec CODEC = new DocumentCodec(MongoClientSettings.getDefaultCodecRegistry());

    final VersionedStoreConfig config;
    final String name;
    final MongoCollection<Document> roots;
    final MongoCollection<Document> items;
    final MongoCollection<Document> history;
    final MongoDatabase database;
    final ServerClock clock;
    final VersionedStoreListener listener;
    final RetryPolicy retry;
    /** The unique indexes that make a repeated item insert and a second history entry of a version collide. */
    final RequiredIndexes requiredIndexes;

    final LongAdder staged = new LongAdder();
    final LongAdder committed = new LongAdder();
    final LongAdder conflicts = new LongAdder();
    final LongAdder abandoned = new LongAdder();
    final LongAdder treeReads = new LongAdder();
    final LongAdder settledVersions = new LongAdder();
    final LongAdder cleanedDocuments = new LongAdder();
    final LongAdder prunedDocuments = new LongAdder();

    /** Builds the engine's state (see {@link VersionEngine}). */
    VersionFields(VersionedStoreConfig config, MongoDatabase database, ServerClock clock,
                         VersionedStoreListener listener) {
        database = ReadSettings.ownReads(database);
        this.config = Objects.requireNonNull(config, "config");
        this.name = config.name();
        this.roots = database.getCollection(config.rootsCollection());
        this.items = database.getCollection(config.itemsCollection());
        this.history = database.getCollection(config.historyCollection());
        this.database = database;
        this.clock = Objects.requireNonNull(clock, "clock");
        this.listener = Objects.requireNonNull(listener, "listener");
        this.retry = config.retryPolicy();
        this.requiredIndexes = new RequiredIndexes(name, List.of(
                new RequiredIndexes.Unique(items, "root_item_version_att", List.of(ROOT, ITEM, VERSION, ATT), false,
                        null),
                new RequiredIndexes.Unique(history, "root_v", List.of(ROOT, V), false, null)));
    }

    /** Every index the store's queries use. */
    public void ensureIndexes() {
        requiredIndexes.create();
        items.createIndex(Indexes.ascending(ROOT, VERSION), new IndexOptions().name("root_version"));
        items.createIndex(Indexes.ascending(COMMITTED, ROOT), new IndexOptions().name("committed_root"));
        roots.createIndex(Indexes.ascending(PENDING_COUNT), new IndexOptions().name("pendingCount"));
        history.createIndex(Indexes.ascending(ROOT, CS), new IndexOptions().name("root_cs"));
        PatternRegistry.register(database, new PatternRegistry.Registration("versioning", config.name(),
                Map.of("roots", config.rootsCollection(), "items", config.itemsCollection(), "history",
                        config.historyCollection()), Map.of()));
    }

    // ---------------------------------------------------------------- helpers

    /** The staged attempts by slot, each with its staging time ({@code at}) when the root was read with it. */
    static Document pending(Document root) {
        return withTimes(root, PENDING, PENDING_AT);
    }

    /** The unsettled versions by slot, each with its commit time ({@code at}) when the root was read with it. */
    static Document unsettled(Document root) {
        return withTimes(root, UNSETTLED, UNSETTLED_AT);
    }

    static Document withTimes(Document root, String entriesField, String timesField) {
        Document entries = root.get(entriesField, Document.class);
        if (entries == null) {
            return new Document();
        }
        Document times = root.get(timesField, Document.class);
        if (times == null) {
            return entries;
        }
        Document out = new Document();
        entries.forEach((slot, entry) -> {
            Document copy = new Document((Document) entry);
            Object at = times.get(slot);
            if (at != null) {
                copy.append(AT, at);
            }
            out.append(slot, copy);
        });
        return out;
    }

    static Document unsettledEntry(Document root, long version) {
        for (Object value : unsettled(root).values()) {
            if (number((Document) value, V) == version) {
                return (Document) value;
            }
        }
        return null;
    }

    static Map<Long, ObjectId> unsettledAtts(Document root) {
        Map<Long, ObjectId> out = new HashMap<>();
        for (Object value : unsettled(root).values()) {
            Document entry = (Document) value;
            out.put(number(entry, V), entry.getObjectId(ATT));
        }
        return out;
    }

    static long number(Document d, String field) {
        Object v = d.get(field);
        return v == null ? 0 : ((Number) v).longValue();
    }

    static Object normalize(Object id) {
        if (id instanceof Integer || id instanceof Short || id instanceof Byte) {
            return ((Number) id).longValue();
        }
        return id;
    }

    static int encodedSize(Document d) {
        return new RawBsonDocument(d, CODEC).getByteBuffer().remaining();
    }

    Document findRoot(Object id) {
        Document root = retry.execute(name, id, "read root", () -> roots.find(eq("_id", id)).first());
        if (root == null) {
            throw new UnknownRootException(name, id);
        }
        return root;
    }

    /** A root id checked and normalised (small integers become longs). */
    public Object rootId(Object rootId) {
        return normalize(Ids.documentId(name, "rootId", rootId, roots.getCodecRegistry()));
    }
}
