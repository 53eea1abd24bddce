package dev.consistencykit.versioning.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.lte;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.LongAdder;

import org.bson.BsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.codecs.DocumentCodec;
import org.bson.conversions.Bson;
import org.bson.types.ObjectId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.google.common.collect.Lists;
import com.google.common.hash.Hasher;
import com.google.common.hash.Hashing;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.ErrorCategory;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.Inputs;
import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.Listeners;
import dev.consistencykit.core.MongoErrors;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.PatternRegistry;
import dev.consistencykit.core.ReadSettings;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.core.WriteConcerns;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.ChangeSetAbandonedException;
import dev.consistencykit.versioning.ItemVersion;
import dev.consistencykit.versioning.Retention;
import dev.consistencykit.versioning.UnknownRootException;
import dev.consistencykit.versioning.VersionConflictException;
import dev.consistencykit.versioning.VersionInfo;
import dev.consistencykit.versioning.VersionListener;
import dev.consistencykit.versioning.VersionPrunedException;
import dev.consistencykit.versioning.VersionedStoreConfig;
import dev.consistencykit.versioning.VersionedStoreMetrics;
import dev.consistencykit.versioning.VersionedTree;

/**
 * The versioned-store protocol (see the package documentation of {@code dev.consistencykit.versioning}): stage on the
 * root, write the item versions, commit by compare-and-set on the root; read the root, then the item versions it
 * commits; settle, clean up, prune and recover from any number of processes.
 */
public final class VersionEngine {

    /** Status name of a staged change set. */
    public static final String STAGED = "STAGED";
    /** Status name of a committed change set. */
    public static final String COMMITTED_STATE = "COMMITTED";
    /** Status name of an abandoned change set. */
    public static final String ABANDONED_STATE = "ABANDONED";

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

    private static final Logger LOG = LoggerFactory.getLogger(VersionEngine.class);
    private static final int STAGE_ATTEMPTS = 5;
    private static final int SETTLE_BATCH = 256;
    private static final DocumentCodec CODEC = new DocumentCodec(MongoClientSettings.getDefaultCodecRegistry());

    private final VersionedStoreConfig config;
    private final String name;
    private final MongoCollection<Document> roots;
    private final MongoCollection<Document> items;
    private final MongoCollection<Document> history;
    private final MongoDatabase database;
    private final ServerClock clock;
    private final VersionListener listener;
    private final RetryPolicy retry;

    private final LongAdder staged = new LongAdder();
    private final LongAdder committed = new LongAdder();
    private final LongAdder conflicts = new LongAdder();
    private final LongAdder abandoned = new LongAdder();
    private final LongAdder treeReads = new LongAdder();
    private final LongAdder settledVersions = new LongAdder();
    private final LongAdder cleanedDocuments = new LongAdder();
    private final LongAdder prunedDocuments = new LongAdder();

    /** The engine over {@code database} (already checked for an acknowledged write concern). */
    public VersionEngine(VersionedStoreConfig config, MongoDatabase database, ServerClock clock,
                         VersionListener listener) {
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
    }

    /** Every index the store's queries use. */
    public void ensureIndexes() {
        items.createIndex(Indexes.ascending(ROOT, ITEM, VERSION, ATT),
                new IndexOptions().unique(true).name("root_item_version_att"));
        items.createIndex(Indexes.ascending(ROOT, VERSION), new IndexOptions().name("root_version"));
        items.createIndex(Indexes.ascending(COMMITTED, ROOT), new IndexOptions().name("committed_root"));
        roots.createIndex(Indexes.ascending(PENDING_COUNT), new IndexOptions().name("pendingCount"));
        history.createIndex(Indexes.ascending(ROOT, V), new IndexOptions().unique(true).name("root_v"));
        history.createIndex(Indexes.ascending(ROOT, CS), new IndexOptions().name("root_cs"));
        PatternRegistry.register(database, new PatternRegistry.Registration("versioning", config.name(),
                Map.of("roots", config.rootsCollection(), "items", config.itemsCollection(), "history",
                        config.historyCollection()), Map.of()));
    }

    // ---------------------------------------------------------------- roots

    /** Creates root {@code rootId} at version 0 with no items; false if it exists. */
    public boolean createRoot(Object rootId) {
        Object id = rootId(rootId);
        Document root = new Document("_id", id).append(VERSION, 0L).append(FLOOR, 0L)
                .append(PENDING, new Document()).append(PENDING_AT, new Document()).append(PENDING_COUNT, 0)
                .append(UNSETTLED, new Document()).append(UNSETTLED_AT, new Document()).append(UNSETTLED_COUNT, 0)
                .append(ABANDONED, 0L).append(META, null);
        try {
            retry.run(name, id, "create root", () -> roots.insertOne(root));
            return true;
        } catch (MongoException e) {
            if (MongoErrors.isDuplicateKey(e)) {
                // it exists (made earlier, or by this call's own attempt whose acknowledgement was lost): make sure
                // it is as durable as the write concern asks before saying so
                retry.run(name, id, "confirm root", () -> WriteConcerns.confirm(roots, id, name, "create root"));
                return false;
            }
            throw e;
        }
    }

    /** A root id checked and normalised (small integers become longs). */
    public Object rootId(Object rootId) {
        return normalize(Inputs.documentId(name, "rootId", rootId, roots.getCodecRegistry()));
    }

    // ---------------------------------------------------------------- write

    /** A change set checked and fingerprinted: nothing is sent. */
    public record Prepared(ChangeSet changeSet, Object rootId, Object id, String slot, String fingerprint,
                           Map<Object, Optional<RawBsonDocument>> values) {

        long base() {
            return changeSet.baseVersion();
        }

        long version() {
            return changeSet.version();
        }

        int size() {
            return changeSet.changes().size();
        }
    }

    /** Validates {@code cs} completely (ids, keys, sizes) and fingerprints it. Sends nothing. */
    public Prepared prepare(ChangeSet cs) {
        Objects.requireNonNull(cs, "changeSet");
        Object root = rootId(cs.rootId());
        if (cs.baseVersion() < 0) {
            throw new InvalidInputException(name, "baseVersion", "baseVersion must be >= 0, was " + cs.baseVersion());
        }
        if (cs.changes().isEmpty()) {
            throw new InvalidInputException(name, "changes", "changes must not be empty: a change set must put or delete at least one item"
                    + " (change set " + cs.id() + " on root " + root + " is empty)");
        }
        // each value is encoded once: its bytes are checked for size, fingerprinted, and inserted as they are
        Map<Object, Optional<RawBsonDocument>> values = new LinkedHashMap<>();
        TreeMap<String, byte[]> canonical = new TreeMap<>();
        for (Map.Entry<Object, Optional<Document>> change : cs.changes().entrySet()) {
            Object item = normalize(Inputs.documentId(name, "itemId", change.getKey(), items.getCodecRegistry()));
            String key = VersionedTree.canonicalId(item);
            if (change.getValue().isPresent()) {
                // encoded once with the database's own codecs (a UUID or a POJO the caller's client stores is
                // accepted), checked as BSON, and these bytes are what is stored
                BsonDocument value = Inputs.plainDocument(name, "value of item " + Inputs.show(item),
                        change.getValue().get(), items.getCodecRegistry());
                RawBsonDocument raw = new RawBsonDocument(value, new BsonDocumentCodec());
                int bytes = encodedSize(itemDocument(root, item, cs.version(), new ObjectId(), cs.id().value(),
                        Optional.empty())) + 1 + VALUE.length() + 1 + raw.getByteBuffer().remaining();
                if (bytes > MAX_DOCUMENT_BYTES) {
                    throw new InvalidInputException(name, "value of item " + item, "item " + item + " would be stored"
                            + " as a " + bytes + "-byte document, over the server's limit of " + MAX_DOCUMENT_BYTES
                            + " bytes");
                }
                values.put(item, Optional.of(raw));
                canonical.put(key, bytesOf(raw));
            } else {
                values.put(item, Optional.empty());
                canonical.put(key, new byte[0]);
            }
        }
        Hasher hasher = Hashing.sha256().newHasher()
                .putString(VersionedTree.canonicalId(root), StandardCharsets.UTF_8).putByte((byte) 0)
                .putLong(cs.baseVersion());
        canonical.forEach((k, v) -> hasher.putString(k, StandardCharsets.UTF_8).putByte((byte) 0)
                .putInt(v.length).putBytes(v));
        cs.meta().ifPresent(meta -> {
            BsonDocument encodedMeta = Inputs.plainDocument(name, "meta", meta, roots.getCodecRegistry());
            byte[] bytes = bytesOf(new RawBsonDocument(encodedMeta, new BsonDocumentCodec()));
            if (bytes.length > MAX_META_BYTES) {
                throw new InvalidInputException(name, "meta", "meta is " + bytes.length + " bytes, over the limit of "
                        + MAX_META_BYTES);
            }
            hasher.putBytes(bytes);
        });
        String fingerprint = hasher.hash().toString().substring(0, 32);
        String slot = "c" + Hashing.sha256().hashString(VersionedTree.canonicalId(cs.id().value()),
                StandardCharsets.UTF_8).toString().substring(0, 24);
        return new Prepared(cs, root, cs.id().value(), slot, fingerprint, values);
    }

    private static byte[] bytesOf(RawBsonDocument raw) {
        java.nio.ByteBuffer buffer = raw.getByteBuffer().asNIO();
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        return bytes;
    }

    /** One write attempt of a change set: what the root's compare-and-set needs, from a writer or a pending entry. */
    public record Attempt(Object rootId, String slot, Object id, long base, long version, ObjectId att, int size,
                   String fingerprint, Document meta) {

        static Attempt of(Prepared p, ObjectId att) {
            return new Attempt(p.rootId(), p.slot(), p.id(), p.base(), p.version(), att, p.size(), p.fingerprint(),
                    p.changeSet().meta().orElse(null));
        }

        static Attempt of(Object rootId, String slot, Document entry) {
            return new Attempt(rootId, slot, entry.get(CS), number(entry, BASE), number(entry, V),
                    entry.getObjectId(ATT), (int) number(entry, N), entry.getString(FP),
                    entry.get(META, Document.class));
        }

        OperationId operationId() {
            return new OperationId(id);
        }
    }

    /** How {@link #commit} ended. */
    public record Committed(long version, boolean byThisCall) {
    }

    /**
     * Stages, writes and commits {@code p}: three round trips. A change set already committed returns its version.
     *
     * @throws VersionConflictException    if the base is stale (before any write, or after staging: then the staged
     *                                     attempt is abandoned and its documents deleted)
     * @throws ChangeSetAbandonedException if recovery abandoned the attempt before it committed
     */
    public Committed commit(Prepared p) {
        return finish(p, stage(p));
    }

    /** Stages {@code p} and writes its item documents, for recovery (or a later call) to commit: two round trips. */
    public void submit(Prepared p) {
        Attempt a = stage(p);
        if (a.att() != null) {
            writeItems(p, a);
        }
    }

    /**
     * {@link #commit} as the common protocol: committed, or aborted ({@link #ABANDONED_STATE}) when the change set
     * lost to another commit after staging or was abandoned by recovery.
     *
     * @throws VersionConflictException if the base version is already stale (nothing is written)
     */
    public OperationResult apply(Prepared p) {
        Attempt staged = stage(p);
        try {
            finish(p, staged);
            return OperationResult.committed(p.changeSet().id(), COMMITTED_STATE);
        } catch (VersionConflictException | ChangeSetAbandonedException e) {
            return OperationResult.aborted(p.changeSet().id(), ABANDONED_STATE, e.getMessage());
        }
    }

    /**
     * Writes and commits an attempt {@link #stage} returned (nothing to do when it found the change set committed).
     *
     * @throws VersionConflictException    if another change set was committed on the base first (this attempt is
     *                                     then abandoned and its documents deleted)
     * @throws ChangeSetAbandonedException if recovery abandoned the attempt before it committed
     */
    public Committed finish(Prepared p, Attempt attempt) {
        if (attempt.att() == null) {
            return new Committed(attempt.version(), false);
        }
        writeItems(p, attempt);
        if (compareAndSetCommit(attempt)) {
            committed.increment();
            Listeners.call(name, () -> listener.onCommitted(attempt.rootId(), attempt.operationId(),
                    attempt.version(), false));
            LOG.debug("[{}] committed change set {} as version {} of root {}", name, p.id(), p.version(), p.rootId());
            return new Committed(p.version(), true);
        }
        return afterFailedCommit(attempt);
    }

    private Committed afterFailedCommit(Attempt a) {
        Document root = findRoot(a.rootId());
        if (isCommitted(root, a)) {
            return new Committed(a.version(), false);
        }
        Document entry = pending(root).get(a.slot(), Document.class);
        long current = number(root, VERSION);
        if (entry != null && a.att().equals(entry.getObjectId(ATT))) {
            if (current != a.base()) {
                conflicts.increment();
                Listeners.call(name, () -> listener.onConflict(a.rootId(), a.operationId(), a.base(), current));
                abandon(a, "lost to another commit: the root is at version " + current);
                throw new VersionConflictException(name, a.id(), a.rootId(), a.base(), current);
            }
            throw new ConsistencyException(name, a.id(), "the commit of root " + a.rootId()
                    + " matched nothing although the root is at its base and the attempt is staged");
        }
        throw new ChangeSetAbandonedException(name, a.id(), a.rootId());
    }

    /**
     * Records the attempt on the root (one conditional update), or finds the change set already staged or committed.
     * Returns an attempt whose {@code att} is null when the change set is already committed (its version is then the
     * committed one).
     */
    public Attempt stage(Prepared p) {
        Bson filter = and(eq("_id", p.rootId()), eq(VERSION, p.base()), exists(PENDING + "." + p.slot(), false),
                exists(UNSETTLED + "." + p.slot(), false), lt(UNSETTLED_COUNT, config.settleThreshold()));
        for (int round = 0; round < STAGE_ATTEMPTS; round++) {
            // Every request, a retry too, stages a new attempt id. A request whose reply was lost may have staged
            // its attempt, and recovery may have abandoned that attempt before the retry: sending the same id again
            // would bring the abandoned attempt back while recovery goes on to delete its documents. A retry that
            // finds the earlier request's attempt still staged adopts it below.
            ObjectId[] sent = new ObjectId[1];
            long matched = retry.execute(name, p.id(), "stage change set", () -> {
                sent[0] = new ObjectId();
                return roots.updateOne(filter, stageUpdate(p, sent[0])).getMatchedCount();
            });
            if (matched == 1) {
                staged.increment();
                Listeners.call(name, () -> listener.onStaged(p.rootId(), p.changeSet().id(), p.version()));
                return Attempt.of(p, sent[0]);
            }
            Document root = findRoot(p.rootId());
            Document staged = pending(root).get(p.slot(), Document.class);
            if (staged != null) {
                if (!Objects.equals(staged.get(CS), p.id())) {
                    throw new ConsistencyException(name, p.id(), "staging slot " + p.slot() + " of root " + p.rootId()
                            + " holds change set " + staged.get(CS));
                }
                checkFingerprint(p, staged.getString(FP));
                return Attempt.of(p.rootId(), p.slot(), staged);
            }
            Optional<Long> done = committedVersionOf(root, p);
            if (done.isPresent()) {
                return new Attempt(p.rootId(), p.slot(), p.id(), p.base(), done.get(), null, p.size(),
                        p.fingerprint(), null);
            }
            long current = number(root, VERSION);
            if (p.base() < current) {
                conflicts.increment();
                Listeners.call(name, () -> listener.onConflict(p.rootId(), p.changeSet().id(), p.base(), current));
                throw new VersionConflictException(name, p.id(), p.rootId(), p.base(), current);
            }
            if (p.base() > current) {
                throw new InvalidInputException(name, "baseVersion", "baseVersion " + p.base()
                        + " is ahead of root " + p.rootId() + "'s committed version " + current);
            }
            if (number(root, UNSETTLED_COUNT) >= config.settleThreshold()) {
                settleBeforeStaging(p.rootId());
            }
            // otherwise the root is at the base and the slot free again: it changed between the update and the read
        }
        throw new ConsistencyException(name, p.id(), "could not stage on root " + p.rootId() + " after "
                + STAGE_ATTEMPTS + " attempts: it kept changing");
    }

    private Bson stageUpdate(Prepared p, ObjectId att) {
        // whole subdocuments, and the time in a map of its own: the embedded server applies one $set of a
        // subdocument much faster than one $set per field
        Document entry = new Document(CS, p.id()).append(ATT, att).append(BASE, p.base()).append(V, p.version())
                .append(N, p.size()).append(FP, p.fingerprint());
        p.changeSet().meta().ifPresent(meta -> entry.append(META, meta));
        return Updates.combine(Updates.set(PENDING + "." + p.slot(), entry),
                Updates.currentDate(PENDING_AT + "." + p.slot()), Updates.inc(PENDING_COUNT, 1));
    }

    private void checkFingerprint(Prepared p, String stored) {
        if (!p.fingerprint().equals(stored)) {
            throw new IdempotencyConflictException(name, p.id(), "change set id " + p.id() + " on root "
                    + p.rootId() + " was already used for a different change set");
        }
    }

    private Optional<Long> committedVersionOf(Document root, Prepared p) {
        for (Object value : unsettled(root).values()) {
            Document entry = (Document) value;
            if (Objects.equals(entry.get(CS), p.id())) {
                checkFingerprint(p, entry.getString(FP));
                return Optional.of(number(entry, V));
            }
        }
        Document record = retry.execute(name, p.id(), "look up change set",
                () -> history.find(and(eq(ROOT, p.rootId()), eq(CS, p.id()))).first());
        if (record != null) {
            checkFingerprint(p, record.getString(FP));
            return Optional.of(number(record, V));
        }
        return Optional.empty();
    }

    /** Inserts the attempt's item versions (tombstones for deletes); documents already written are fine. */
    public void writeItems(Prepared p, Attempt a) {
        List<Document> docs = new ArrayList<>(p.size());
        p.values().forEach((item, value) -> docs.add(
                itemDocument(a.rootId(), item, a.version(), a.att(), a.id(), value)));
        try {
            retry.run(name, p.id(), "write item versions",
                    () -> items.insertMany(docs, new InsertManyOptions().ordered(false)));
        } catch (MongoBulkWriteException e) {
            for (BulkWriteError error : e.getWriteErrors()) {
                if (error.getCategory() != ErrorCategory.DUPLICATE_KEY) {
                    throw e;
                }
            }
        }
    }

    private static Document itemDocument(Object root, Object item, long version, ObjectId att, Object cs,
                                         Optional<? extends org.bson.conversions.Bson> value) {
        Document d = new Document("_id", new ObjectId()).append(ROOT, root).append(ITEM, item)
                .append(VERSION, version).append(ATT, att).append(CS, cs).append(COMMITTED, false)
                .append(UNTIL, OPEN).append(DELETED, value.isEmpty());
        value.ifPresent(v -> d.append(VALUE, v));
        return d;
    }

    /** The commit: root still at the base and this attempt still staged. Whether it matched. */
    private boolean compareAndSetCommit(Attempt a) {
        Bson filter = and(eq("_id", a.rootId()), eq(VERSION, a.base()),
                eq(PENDING + "." + a.slot() + "." + ATT, a.att()));
        Document entry = new Document(CS, a.id()).append(ATT, a.att()).append(V, a.version()).append(N, a.size())
                .append(FP, a.fingerprint());
        if (a.meta() != null) {
            entry.append(META, a.meta());
        }
        Bson update = Updates.combine(Updates.set(VERSION, a.version()), Updates.set(UNSETTLED + "." + a.slot(), entry),
                Updates.set(META, a.meta()), Updates.currentDate(UNSETTLED_AT + "." + a.slot()),
                Updates.currentDate(COMMITTED_AT), Updates.unset(PENDING + "." + a.slot()),
                Updates.unset(PENDING_AT + "." + a.slot()), Updates.inc(PENDING_COUNT, -1),
                Updates.inc(UNSETTLED_COUNT, 1));
        return retry.execute(name, a.id(), "commit change set",
                () -> roots.updateOne(filter, update).getMatchedCount()) == 1;
    }

    private boolean isCommitted(Document root, Attempt a) {
        Document entry = unsettledEntry(root, a.version());
        if (entry != null) {
            return a.att().equals(entry.getObjectId(ATT));
        }
        if (number(root, VERSION) < a.version()) {
            return false;
        }
        Document record = retry.execute(name, a.id(), "look up version",
                () -> history.find(and(eq(ROOT, a.rootId()), eq(V, a.version()))).first());
        return record != null && a.att().equals(record.getObjectId(ATT));
    }

    /** Takes the attempt out of the root's pending set (if it is still there), then deletes its documents. */
    private boolean abandon(Attempt a, String reason) {
        long matched = retry.execute(name, a.id(), "abandon change set", () -> roots.updateOne(
                and(eq("_id", a.rootId()), eq(PENDING + "." + a.slot() + "." + ATT, a.att())),
                Updates.combine(Updates.unset(PENDING + "." + a.slot()), Updates.unset(PENDING_AT + "." + a.slot()),
                        Updates.inc(PENDING_COUNT, -1),
                        Updates.inc(ABANDONED, 1L))).getMatchedCount());
        if (matched == 0) {
            return false;
        }
        abandoned.increment();
        LOG.info("[{}] abandoned change set {} on root {} (version {}): {}", name, a.id(), a.rootId(), a.version(),
                reason);
        Listeners.call(name, () -> listener.onAbandoned(a.rootId(), a.operationId(), reason));
        deleteAttempt(a.rootId(), a.version(), a.att());
        return true;
    }

    private long deleteAttempt(Object rootId, long version, ObjectId att) {
        long deleted = retry.execute(name, rootId, "delete abandoned item versions", () -> items.deleteMany(
                and(eq(ROOT, rootId), eq(VERSION, version), eq(ATT, att), eq(COMMITTED, false))).getDeletedCount());
        cleanedDocuments.add(deleted);
        return deleted;
    }

    /** Settles a root that reached the threshold before staging on it; a failure is left to maintenance. */
    private void settleBeforeStaging(Object rootId) {
        try {
            settleRoot(rootId);
        } catch (ConsistencyException | MongoException e) {
            LOG.warn("[{}] settling root {} before staging failed (maintenance will settle it): {}", name, rootId,
                    e.toString());
        }
    }

    // ---------------------------------------------------------------- read

    /** How often a read starts again because retention pruned what it was reading. */
    private static final int MAX_READ_ATTEMPTS = 16;

    /**
     * The committed tree at the root's current version: three round trips. The root, the items, and the root's floor
     * again: if retention pruned the version while its items were being read (a pruner in another process, whatever
     * its own settings), the tree read may be partial, so the read starts again at the then current version.
     */
    public VersionedTree read(Object rootId) {
        Object id = rootId(rootId);
        for (int attempt = 1; ; attempt++) {
            Document root = findRootForRead(id);
            long version = number(root, VERSION);
            Map<Object, Document> tree = visibleItems(id, version, unsettledAtts(root));
            if (stillAbove(id, version, attempt)) {
                treeReads.increment();
                return new VersionedTree(id, version, tree, Optional.ofNullable(root.get(META, Document.class)),
                        Optional.ofNullable(root.getDate(COMMITTED_AT)).map(Date::toInstant));
            }
        }
    }

    /**
     * Whether {@code version} is still at or above the root's floor, after its items were read; false means that
     * retention pruned it meanwhile and a current read must start again.
     *
     * @throws VersionPrunedException when reads kept being overtaken by pruning
     */
    private boolean stillAbove(Object id, long version, int attempt) {
        Document again = retry.execute(name, id, "re-read root floor",
                () -> roots.find(eq("_id", id)).projection(Projections.include(FLOOR)).first());
        if (again == null) {
            throw new UnknownRootException(name, id);
        }
        long floor = number(again, FLOOR);
        if (version >= floor) {
            return true;
        }
        LOG.debug("[{}] root {}: version {} was pruned (floor {}) while it was read; reading again", name, id,
                version, floor);
        if (attempt >= MAX_READ_ATTEMPTS) {
            throw new VersionPrunedException(name, id, version, floor);
        }
        return false;
    }

    /** The committed tree as of {@code version}: three round trips (four for the meta of a settled version). */
    public VersionedTree readAsOf(Object rootId, long version) {
        Object id = rootId(rootId);
        Document root = findRootForRead(id);
        long current = number(root, VERSION);
        checkAnswerable(id, root, version);
        Map<Object, Document> tree = visibleItems(id, version, unsettledAtts(root));
        Document again = retry.execute(name, id, "re-read root floor",
                () -> roots.find(eq("_id", id)).projection(Projections.include(FLOOR)).first());
        long floor = again == null ? Long.MAX_VALUE : number(again, FLOOR);
        if (version < floor) {
            // pruned while its items were read: the tree may be partial, so it is not returned
            throw new VersionPrunedException(name, id, version, floor);
        }
        treeReads.increment();
        if (version == current) {
            return new VersionedTree(id, version, tree, Optional.ofNullable(root.get(META, Document.class)),
                    Optional.ofNullable(root.getDate(COMMITTED_AT)).map(Date::toInstant));
        }
        Document entry = unsettledEntry(root, version);
        if (entry == null) {
            entry = retry.execute(name, id, "read version record",
                    () -> history.find(and(eq(ROOT, id), eq(V, version))).first());
        }
        Optional<Document> meta = entry == null ? Optional.empty() : Optional.ofNullable(entry.get(META, Document.class));
        Optional<Instant> at = entry == null ? Optional.empty() : Optional.ofNullable(entry.getDate(AT))
                .map(Date::toInstant);
        return new VersionedTree(id, version, tree, meta, at);
    }

    private void checkAnswerable(Object id, Document root, long version) {
        long current = number(root, VERSION);
        if (version < 0) {
            throw new InvalidInputException(name, "version", "version must be >= 0, was " + version);
        }
        if (version > current) {
            throw new InvalidInputException(name, "version", "version " + version + " is ahead of root " + id
                    + "'s committed version " + current);
        }
        long floor = number(root, FLOOR);
        if (version < floor) {
            throw new VersionPrunedException(name, id, version, floor);
        }
    }

    /**
     * Item {@code itemId} at the root's current version: three round trips (the root, the item's versions, the root's
     * floor again, so that a version pruned meanwhile is never answered from a partial read).
     */
    public Optional<Document> get(Object rootId, Object itemId) {
        Object id = rootId(rootId);
        Object item = normalize(Inputs.documentId(name, "itemId", itemId, items.getCodecRegistry()));
        for (int attempt = 1; ; attempt++) {
            Document root = findRootForRead(id);
            long version = number(root, VERSION);
            Map<Long, ObjectId> unsettled = unsettledAtts(root);
            Optional<Document> found = Optional.empty();
            for (Document d : retry.execute(name, id, "read item versions", () -> items.find(and(eq(ROOT, id),
                    eq(ITEM, item), lte(VERSION, version))).sort(Sorts.descending(VERSION)).into(new ArrayList<>()))) {
                if (visible(d, unsettled)) {
                    found = d.getBoolean(DELETED, false) ? Optional.empty() : Optional.of(d.get(VALUE, Document.class));
                    break;
                }
            }
            if (stillAbove(id, version, attempt)) {
                return found;
            }
        }
    }

    /** Every committed version of {@code itemId} still kept, oldest first. */
    public List<ItemVersion> history(Object rootId, Object itemId) {
        Object id = rootId(rootId);
        Object item = normalize(Inputs.documentId(name, "itemId", itemId, items.getCodecRegistry()));
        Document root = findRootForRead(id);
        Map<Long, ObjectId> unsettled = unsettledAtts(root);
        long current = number(root, VERSION);
        List<ItemVersion> out = new ArrayList<>();
        for (Document d : items.find(and(eq(ROOT, id), eq(ITEM, item), lte(VERSION, current)))
                .sort(Sorts.ascending(VERSION))) {
            if (visible(d, unsettled)) {
                out.add(new ItemVersion(item, number(d, VERSION), d.getBoolean(DELETED, false) ? Optional.empty()
                        : Optional.of(d.get(VALUE, Document.class)), d.get(CS)));
            }
        }
        return out;
    }

    /** Every committed version still kept (from the floor on), oldest first. Version 0 has no record. */
    public List<VersionInfo> versions(Object rootId) {
        Object id = rootId(rootId);
        Document root = findRootForRead(id);
        long floor = number(root, FLOOR);
        TreeMap<Long, VersionInfo> out = new TreeMap<>();
        for (Document record : history.find(and(eq(ROOT, id), gte(V, floor))).sort(Sorts.ascending(V))) {
            out.put(number(record, V), versionInfo(record));
        }
        for (Object value : unsettled(root).values()) {
            Document entry = (Document) value;
            if (number(entry, V) >= floor) {
                out.putIfAbsent(number(entry, V), versionInfo(entry));
            }
        }
        return List.copyOf(out.values());
    }

    private static VersionInfo versionInfo(Document entry) {
        return new VersionInfo(number(entry, V), entry.get(CS), (int) number(entry, N),
                Optional.ofNullable(entry.getDate(AT)).map(Date::toInstant),
                Optional.ofNullable(entry.get(META, Document.class)));
    }

    /**
     * For each item: its newest version at or below {@code version} that the root commits, unless a committed version
     * at or below {@code version} replaced it. Newest first, so that a concurrent prune (which deletes older documents
     * before newer ones) can never show an older value without the newer tombstone.
     */
    private Map<Object, Document> visibleItems(Object rootId, long version, Map<Long, ObjectId> unsettled) {
        Map<Object, Document> tree = new HashMap<>();
        Set<Object> decided = new HashSet<>();
        for (Document d : items.find(and(eq(ROOT, rootId), lte(VERSION, version), gt(UNTIL, version)))
                .sort(Sorts.descending(VERSION))
                .projection(Projections.include(ITEM, VERSION, ATT, COMMITTED, DELETED, VALUE))) {
            Object item = d.get(ITEM);
            if (decided.contains(item) || !visible(d, unsettled)) {
                continue;
            }
            decided.add(item);
            if (!d.getBoolean(DELETED, false)) {
                tree.put(item, d.get(VALUE, Document.class));
            }
        }
        return tree;
    }

    private static boolean visible(Document itemVersion, Map<Long, ObjectId> unsettled) {
        if (itemVersion.getBoolean(COMMITTED, false)) {
            return true;
        }
        ObjectId att = unsettled.get(number(itemVersion, VERSION));
        return att != null && att.equals(itemVersion.getObjectId(ATT));
    }

    private Document findRootForRead(Object id) {
        Document root = retry.execute(name, id, "read root", () -> roots.find(eq("_id", id))
                .projection(Projections.include(VERSION, FLOOR, UNSETTLED, UNSETTLED_AT, META, COMMITTED_AT)).first());
        if (root == null) {
            throw new UnknownRootException(name, id);
        }
        return root;
    }

    private Document findRoot(Object id) {
        Document root = retry.execute(name, id, "read root", () -> roots.find(eq("_id", id)).first());
        if (root == null) {
            throw new UnknownRootException(name, id);
        }
        return root;
    }

    // ---------------------------------------------------------------- maintenance

    /**
     * Decides every change set staged longer than {@code staleAfter} (commit when the root is still at its base and
     * all its documents are written, else abandon), then settles, cleans up and prunes.
     */
    public RecoveryReport recover(Duration staleAfter) {
        long start = System.nanoTime();
        Date cutoff = clock.cutoff(staleAfter);
        int examined = 0;
        int forward = 0;
        int back = 0;
        int skipped = 0;
        List<Document> withPending = retry.execute(name, null, "find staged change sets", () -> roots
                .find(gt(PENDING_COUNT, 0)).projection(Projections.include(VERSION, PENDING, PENDING_AT))
                .into(new ArrayList<>()));
        for (Document root : withPending) {
            Object rootId = root.get("_id");
            for (Map.Entry<String, Object> e : pending(root).entrySet()) {
                Document entry = (Document) e.getValue();
                Date at = entry.getDate(AT);
                if (at != null && at.after(cutoff)) {
                    continue;
                }
                examined++;
                Attempt a = Attempt.of(rootId, e.getKey(), entry);
                switch (decide(root, a)) {
                    case FORWARD -> forward++;
                    case BACK -> back++;
                    default -> skipped++;
                }
            }
        }
        long settled = settle();
        long cleaned = cleanup();
        long pruned = prune();
        if (examined + settled + cleaned + pruned > 0) {
            LOG.info("[{}] recovery: {} stale change sets ({} committed, {} abandoned, {} left to others), {} versions"
                    + " settled, {} abandoned and {} pruned documents deleted", name, examined, forward, back, skipped,
                    settled, cleaned, pruned);
        }
        return new RecoveryReport(name, examined, forward, back, skipped,
                Duration.ofNanos(System.nanoTime() - start));
    }

    private enum Decision { FORWARD, BACK, NONE }

    private Decision decide(Document root, Attempt a) {
        if (number(root, VERSION) == a.base()) {
            long written = retry.execute(name, a.id(), "count item versions", () -> items.countDocuments(
                    and(eq(ROOT, a.rootId()), eq(VERSION, a.version()), eq(ATT, a.att()))));
            if (written == a.size()) {
                if (compareAndSetCommit(a)) {
                    committed.increment();
                    LOG.info("[{}] recovery committed change set {} as version {} of root {}", name, a.id(),
                            a.version(), a.rootId());
                    Listeners.call(name, () -> listener.onCommitted(a.rootId(), a.operationId(), a.version(), true));
                    return Decision.FORWARD;
                }
                // the root moved (another attempt committed), or another recoverer decided this one
                return abandon(a, "its base " + a.base() + " is no longer the root's version")
                        ? Decision.BACK : Decision.NONE;
            }
            return abandon(a, "its writer went quiet after writing " + written + " of " + a.size()
                    + " item versions") ? Decision.BACK : Decision.NONE;
        }
        return abandon(a, "its writer went quiet and the root moved past its base " + a.base())
                ? Decision.BACK : Decision.NONE;
    }

    /**
     * Settles every root with unsettled versions: those with documents not yet marked committed (found by cleanup's
     * index, so the roots need no index of their own for it). Returns the versions settled.
     */
    public long settle() {
        Set<Object> candidates = new LinkedHashSet<>();
        retry.run(name, null, "find unsettled roots", () -> {
            candidates.clear();
            for (Document d : items.find(eq(COMMITTED, false)).projection(Projections.include(ROOT))) {
                candidates.add(d.get(ROOT));
            }
        });
        long total = 0;
        for (Object rootId : candidates) {
            total += settleRoot(rootId);
        }
        return total;
    }

    /**
     * Marks the documents of the root's unsettled versions committed, stamps the documents they replaced with
     * {@code until}, records each version in the history collection, and only then removes it from the root.
     */
    public long settleRoot(Object rootId) {
        Document root = retry.execute(name, rootId, "read unsettled versions",
                () -> roots.find(eq("_id", rootId)).projection(Projections.include(UNSETTLED, UNSETTLED_AT)).first());
        if (root == null) {
            return 0;
        }
        TreeMap<Long, Document> entries = new TreeMap<>();
        Map<Long, String> slots = new HashMap<>();
        unsettled(root).forEach((slot, v) -> {
            entries.put(number((Document) v, V), (Document) v);
            slots.put(number((Document) v, V), slot);
        });
        long settled = 0;
        for (List<Long> batch : Lists.partition(new ArrayList<>(entries.keySet()), SETTLE_BATCH)) {
            settled += settleBatch(rootId, batch, entries, slots);
        }
        if (settled > 0) {
            settledVersions.add(settled);
            long count = settled;
            Listeners.call(name, () -> listener.onMaintained(rootId, (int) count, 0, 0));
        }
        return settled;
    }

    private long settleBatch(Object rootId, List<Long> versions, Map<Long, Document> entries,
                             Map<Long, String> slots) {
        List<WriteModel<Document>> marks = new ArrayList<>();
        for (long v : versions) {
            marks.add(new UpdateManyModel<>(and(eq(ROOT, rootId), eq(VERSION, v), eq(ATT, entries.get(v).get(ATT))),
                    Updates.set(COMMITTED, true)));
        }
        List<Document> written = retry.execute(name, rootId, "read settled item ids", () -> items
                .find(and(eq(ROOT, rootId), in(VERSION, versions)))
                .projection(Projections.include(ITEM, VERSION, ATT)).into(new ArrayList<>()));
        for (Document d : written) {
            long v = number(d, VERSION);
            if (entries.get(v).getObjectId(ATT).equals(d.getObjectId(ATT))) {
                marks.add(new UpdateManyModel<>(and(eq(ROOT, rootId), eq(ITEM, d.get(ITEM)), lt(VERSION, v),
                        gt(UNTIL, v)), Updates.min(UNTIL, v)));
            }
        }
        retry.run(name, rootId, "mark settled item versions",
                () -> items.bulkWrite(marks, new BulkWriteOptions().ordered(false)));
        List<WriteModel<Document>> records = new ArrayList<>();
        for (long v : versions) {
            Document entry = entries.get(v);
            records.add(new UpdateOneModel<>(and(eq(ROOT, rootId), eq(V, v)), Updates.combine(
                    Updates.setOnInsert(CS, entry.get(CS)), Updates.setOnInsert(ATT, entry.get(ATT)),
                    Updates.setOnInsert(N, entry.get(N)), Updates.setOnInsert(FP, entry.get(FP)),
                    Updates.setOnInsert(META, entry.get(META)), Updates.setOnInsert(AT, entry.get(AT))),
                    new UpdateOptions().upsert(true)));
        }
        try {
            retry.run(name, rootId, "record settled versions",
                    () -> history.bulkWrite(records, new BulkWriteOptions().ordered(false)));
        } catch (MongoBulkWriteException e) {
            for (BulkWriteError error : e.getWriteErrors()) {
                if (error.getCategory() != ErrorCategory.DUPLICATE_KEY) {
                    throw e;
                }
            }
        }
        List<WriteModel<Document>> trims = new ArrayList<>();
        for (long v : versions) {
            trims.add(new UpdateOneModel<>(and(eq("_id", rootId),
                    eq(UNSETTLED + "." + slots.get(v) + "." + ATT, entries.get(v).get(ATT))),
                    Updates.combine(Updates.unset(UNSETTLED + "." + slots.get(v)),
                            Updates.unset(UNSETTLED_AT + "." + slots.get(v)), Updates.inc(UNSETTLED_COUNT, -1))));
        }
        return retry.execute(name, rootId, "remove settled versions from the root",
                () -> roots.bulkWrite(trims, new BulkWriteOptions().ordered(false)).getModifiedCount());
    }

    /**
     * Deletes item versions that no root stages or commits: those of abandoned attempts, including any a paused
     * writer inserted after its attempt was abandoned. Reads the documents first and the roots second, and deletes
     * only unmarked documents, so an attempt staged, committed or settled meanwhile is never touched.
     */
    public long cleanup() {
        Map<Object, Set<List<Object>>> candidates = new LinkedHashMap<>();
        retry.run(name, null, "find uncommitted item versions", () -> {
            candidates.clear();
            for (Document d : items.find(eq(COMMITTED, false)).projection(Projections.include(ROOT, VERSION, ATT))) {
                candidates.computeIfAbsent(d.get(ROOT), k -> new HashSet<>())
                        .add(List.of(number(d, VERSION), d.getObjectId(ATT)));
            }
        });
        long deleted = 0;
        for (Map.Entry<Object, Set<List<Object>>> e : candidates.entrySet()) {
            Object rootId = e.getKey();
            Document root = retry.execute(name, rootId, "read root", () -> roots.find(eq("_id", rootId))
                    .projection(Projections.include(PENDING, UNSETTLED)).first());
            if (root == null) {
                LOG.warn("[{}] {} uncommitted item versions belong to root {}, which does not exist; left alone",
                        name, e.getValue().size(), rootId);
                continue;
            }
            Set<List<Object>> live = new HashSet<>();
            for (Object value : pending(root).values()) {
                live.add(List.of(number((Document) value, V), ((Document) value).getObjectId(ATT)));
            }
            for (Object value : unsettled(root).values()) {
                live.add(List.of(number((Document) value, V), ((Document) value).getObjectId(ATT)));
            }
            long rootDeleted = 0;
            for (List<Object> key : e.getValue()) {
                if (!live.contains(key)) {
                    rootDeleted += deleteAttempt(rootId, (Long) key.get(0), (ObjectId) key.get(1));
                }
            }
            if (rootDeleted > 0) {
                long count = rootDeleted;
                LOG.info("[{}] deleted {} abandoned item versions of root {}", name, count, rootId);
                Listeners.call(name, () -> listener.onMaintained(rootId, 0, count, 0));
            }
            deleted += rootDeleted;
        }
        return deleted;
    }

    /** Applies the retention policy to every root. Returns the documents deleted. */
    public long prune() {
        Retention retention = config.retention();
        if (retention.keepsAll()) {
            return 0;
        }
        List<Document> all = retry.execute(name, null, "list roots", () -> roots.find(gte(VERSION, 0L))
                .projection(Projections.include(VERSION, FLOOR)).into(new ArrayList<>()));
        long deleted = 0;
        for (Document root : all) {
            Object rootId = root.get("_id");
            long target = targetFloor(rootId, number(root, VERSION), retention);
            if (target > number(root, FLOOR)) {
                deleted += pruneRoot(rootId, target);
            }
        }
        return deleted;
    }

    private long targetFloor(Object rootId, long version, Retention retention) {
        if (retention.keepLast().isPresent()) {
            return Math.max(0, version - retention.keepLast().get() + 1);
        }
        settleRoot(rootId);
        Date cutoff = clock.cutoff(retention.newerThan().orElseThrow());
        Document oldestKept = retry.execute(name, rootId, "find oldest kept version", () -> history
                .find(and(eq(ROOT, rootId), gte(AT, cutoff))).sort(Sorts.ascending(V)).limit(1).first());
        return oldestKept == null ? version : Math.min(version, number(oldestKept, V));
    }

    /**
     * Raises the root's floor to {@code floor}, then deletes the versions replaced at or below it, then the committed
     * tombstones at or below it, then their history records.
     */
    private long pruneRoot(Object rootId, long floor) {
        settleRoot(rootId);
        retry.run(name, rootId, "raise floor", () -> roots.updateOne(eq("_id", rootId), Updates.max(FLOOR, floor)));
        long deleted = retry.execute(name, rootId, "delete replaced item versions", () -> items.deleteMany(
                and(eq(ROOT, rootId), lte(VERSION, floor), lte(UNTIL, floor))).getDeletedCount());
        deleted += retry.execute(name, rootId, "delete old tombstones", () -> items.deleteMany(
                and(eq(ROOT, rootId), lte(VERSION, floor), eq(DELETED, true), eq(COMMITTED, true)))
                .getDeletedCount());
        retry.run(name, rootId, "delete old version records",
                () -> history.deleteMany(and(eq(ROOT, rootId), lt(V, floor))));
        prunedDocuments.add(deleted);
        long count = deleted;
        LOG.info("[{}] pruned root {} below version {}: {} item versions deleted", name, rootId, floor, count);
        Listeners.call(name, () -> listener.onMaintained(rootId, 0, 0, count));
        return deleted;
    }

    // ---------------------------------------------------------------- status

    /** Change sets staged longer than {@code staleAfter} ago and neither committed nor abandoned, oldest first. */
    public List<InterruptedOperation> interrupted(Duration staleAfter, int limit) {
        Date cutoff = clock.cutoff(staleAfter);
        List<InterruptedOperation> out = new ArrayList<>();
        for (Document root : roots.find(gt(PENDING_COUNT, 0)).projection(Projections.include(PENDING, PENDING_AT))) {
            for (Object value : pending(root).values()) {
                Document entry = (Document) value;
                Date at = entry.getDate(AT);
                if (at != null && !at.after(cutoff)) {
                    out.add(new InterruptedOperation(entry.get(CS), STAGED, clock.ageOf(at.toInstant()), "root "
                            + root.get("_id") + ", version " + number(entry, V)));
                }
            }
        }
        out.sort(java.util.Comparator.comparing(InterruptedOperation::age).reversed());
        return out.subList(0, Math.min(limit, out.size()));
    }

    /** Change sets per state over every root, and the age of the oldest staged one. */
    public StrategyStatus status() {
        Document sums = retry.execute(name, null, "sum root counters", () -> roots.aggregate(List.of(
                Aggregates.group(null, Accumulators.sum("c", "$" + VERSION), Accumulators.sum("a", "$" + ABANDONED),
                        Accumulators.sum("p", "$" + PENDING_COUNT)))).first());
        long committedCount = sums == null ? 0 : number(sums, "c");
        long abandonedCount = sums == null ? 0 : number(sums, "a");
        long stagedCount = sums == null ? 0 : number(sums, "p");
        Instant oldest = null;
        for (Document root : roots.find(gt(PENDING_COUNT, 0)).projection(Projections.include(PENDING, PENDING_AT))) {
            for (Object value : pending(root).values()) {
                Date at = ((Document) value).getDate(AT);
                if (at != null && (oldest == null || at.toInstant().isBefore(oldest))) {
                    oldest = at.toInstant();
                }
            }
        }
        Map<String, Long> counts = new LinkedHashMap<>();
        counts.put(STAGED, stagedCount);
        counts.put(COMMITTED_STATE, committedCount);
        counts.put(ABANDONED_STATE, abandonedCount);
        return new StrategyStatus(name, counts, stagedCount,
                stagedCount == 0 || oldest == null ? Optional.empty() : Optional.of(clock.ageOf(oldest)));
    }

    /** This instance's counters. */
    public VersionedStoreMetrics metrics() {
        return new VersionedStoreMetrics(staged.sum(), committed.sum(), conflicts.sum(), abandoned.sum(),
                treeReads.sum(), settledVersions.sum(), cleanedDocuments.sum(), prunedDocuments.sum());
    }

    // ---------------------------------------------------------------- helpers

    /** The staged attempts by slot, each with its staging time ({@code at}) when the root was read with it. */
    private static Document pending(Document root) {
        return withTimes(root, PENDING, PENDING_AT);
    }

    /** The unsettled versions by slot, each with its commit time ({@code at}) when the root was read with it. */
    private static Document unsettled(Document root) {
        return withTimes(root, UNSETTLED, UNSETTLED_AT);
    }

    private static Document withTimes(Document root, String entriesField, String timesField) {
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

    private static Document unsettledEntry(Document root, long version) {
        for (Object value : unsettled(root).values()) {
            if (number((Document) value, V) == version) {
                return (Document) value;
            }
        }
        return null;
    }

    private static Map<Long, ObjectId> unsettledAtts(Document root) {
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

    private static Object normalize(Object id) {
        if (id instanceof Integer || id instanceof Short || id instanceof Byte) {
            return ((Number) id).longValue();
        }
        return id;
    }

    private static int encodedSize(Document d) {
        return new RawBsonDocument(d, CODEC).getByteBuffer().remaining();
    }
}
