package dev.consistencykit.versioning.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import dev.consistencykit.versioning.VersionedStoreListener;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lt;
import static dev.consistencykit.versioning.internal.VersionSchema.ABANDONED;
import static dev.consistencykit.versioning.internal.VersionSchema.ABANDONED_STATE;
import static dev.consistencykit.versioning.internal.VersionSchema.ATT;
import static dev.consistencykit.versioning.internal.VersionSchema.BASE;
import static dev.consistencykit.versioning.internal.VersionSchema.COMMITTED;
import static dev.consistencykit.versioning.internal.VersionSchema.COMMITTED_AT;
import static dev.consistencykit.versioning.internal.VersionSchema.COMMITTED_STATE;
import static dev.consistencykit.versioning.internal.VersionSchema.CS;
import static dev.consistencykit.versioning.internal.VersionSchema.DELETED;
import static dev.consistencykit.versioning.internal.VersionSchema.DIRECT;
import static dev.consistencykit.versioning.internal.VersionSchema.FLOOR;
import static dev.consistencykit.versioning.internal.VersionSchema.FP;
import static dev.consistencykit.versioning.internal.VersionSchema.ITEM;
import static dev.consistencykit.versioning.internal.VersionSchema.MAX_DOCUMENT_BYTES;
import static dev.consistencykit.versioning.internal.VersionSchema.MAX_META_BYTES;
import static dev.consistencykit.versioning.internal.VersionSchema.META;
import static dev.consistencykit.versioning.internal.VersionSchema.N;
import static dev.consistencykit.versioning.internal.VersionSchema.OPEN;
import static dev.consistencykit.versioning.internal.VersionSchema.PENDING;
import static dev.consistencykit.versioning.internal.VersionSchema.PENDING_AT;
import static dev.consistencykit.versioning.internal.VersionSchema.PENDING_COUNT;
import static dev.consistencykit.versioning.internal.VersionSchema.ROOT;
import static dev.consistencykit.versioning.internal.VersionSchema.PRIOR;
import static dev.consistencykit.versioning.internal.VersionSchema.TREE;
import static dev.consistencykit.versioning.internal.VersionSchema.UNDO;
import static dev.consistencykit.versioning.internal.VersionSchema.AT;
import static dev.consistencykit.versioning.internal.VersionSchema.UNSETTLED;
import static dev.consistencykit.versioning.internal.VersionSchema.UNSETTLED_AT;
import static dev.consistencykit.versioning.internal.VersionSchema.UNSETTLED_COUNT;
import static dev.consistencykit.versioning.internal.VersionSchema.UNTIL;
import static dev.consistencykit.versioning.internal.VersionSchema.V;
import static dev.consistencykit.versioning.internal.VersionSchema.VALUE;
import static dev.consistencykit.versioning.internal.VersionSchema.VERSION;
import static dev.consistencykit.versioning.internal.VersionSchema.encodedSize;
import static dev.consistencykit.versioning.internal.VersionSchema.normalize;
import static dev.consistencykit.versioning.internal.VersionSchema.number;
import static dev.consistencykit.versioning.internal.VersionSchema.pending;
import static dev.consistencykit.versioning.internal.VersionSchema.unsettled;
import static dev.consistencykit.versioning.internal.VersionSchema.unsettledEntry;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.conversions.Bson;
import org.bson.types.ObjectId;

import com.google.common.hash.Hasher;
import com.google.common.hash.Hashing;

import com.mongodb.MongoException;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.Listeners;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.ChangeSetAbandonedException;
import dev.consistencykit.versioning.UnknownRootException;
import dev.consistencykit.versioning.VersionConflictException;
import dev.consistencykit.versioning.VersionedStoreConfig;
import dev.consistencykit.versioning.VersionedTree;

/**
 * The write protocol: stage on the root, write the item versions, compare-and-set the root, abandon a loser.
 */
public final class VersionWrites {

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

    /** How {@link #commit} ended. */
    public record Committed(long version, boolean byThisCall) {
    }

    private static final Logger LOG = LoggerFactory.getLogger(VersionWrites.class);
    private static final int STAGE_ATTEMPTS = 5;

    private final VersionedStoreConfig config;
    private final String name;
    private final VersionStore store;
    private final VersionSettlement settlement;
    private final VersionCounters counters;
    private final VersionedStoreListener listener;

    /** The writes of a change set, through the store, with the settlement staging may need. */
    VersionWrites(VersionedStoreConfig config, VersionStore store, VersionSettlement settlement,
                  VersionCounters counters, VersionedStoreListener listener) {
        this.config = config;
        this.name = config.name();
        this.store = store;
        this.settlement = settlement;
        this.counters = counters;
        this.listener = listener;
    }

    // ---------------------------------------------------------------- write

    /** Validates {@code cs} completely (ids, keys, sizes) and fingerprints it. Sends nothing. */
    public Prepared prepare(ChangeSet cs) {
        Objects.requireNonNull(cs, "changeSet");
        Object root = store.rootId(cs.rootId());
        if (cs.baseVersion() < 0) {
            throw new InvalidInputException(name, "baseVersion", "baseVersion must be >= 0, was " + cs
                    .baseVersion());
        }
        if (cs.changes().isEmpty()) {
            throw new InvalidInputException(name, "changes",
                    "changes must not be empty: a change set must put or delete at least one item"
                    + " (change set " + cs.id() + " on root " + root + " is empty)");
        }
        // each value is encoded once: its bytes are checked for size, fingerprinted, and inserted as they are
        Map<Object, Optional<RawBsonDocument>> values = new LinkedHashMap<>();
        TreeMap<String, byte[]> canonical = new TreeMap<>();
        for (Map.Entry<Object, Optional<Object>> change : cs.changes().entrySet()) {
            Object item = normalize(Ids.documentId(name, "itemId", change.getKey(), store.codecs()));
            String key = VersionedTree.canonicalId(item);
            if (change.getValue().isPresent()) {
                // encoded once with the database's own codecs (a UUID or a POJO the caller's client stores is
                // accepted), checked as BSON, and these bytes are what is stored
                BsonDocument value = Values.plainDocument(name, "value of item " + Values.show(item),
                        change.getValue().get(), store.codecs());
                RawBsonDocument raw = new RawBsonDocument(value, new BsonDocumentCodec());
                int bytes = encodedSize(itemDocument(root, item, cs.version(), new ObjectId(), cs.id().value(),
                        Optional.empty())) + 1 + VALUE.length() + 1 + raw.getByteBuffer().remaining();
                if (bytes > MAX_DOCUMENT_BYTES) {
                    throw new InvalidInputException(name, "value of item " + item, "item " + item
                            + " would be stored"
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
            BsonDocument encodedMeta = Values.plainDocument(name, "meta", meta, store.codecs());
            byte[] bytes = bytesOf(new RawBsonDocument(encodedMeta, new BsonDocumentCodec()));
            if (bytes.length > MAX_META_BYTES) {
                throw new InvalidInputException(name, "meta", "meta is " + bytes.length
                        + " bytes, over the limit of "
                        + MAX_META_BYTES);
            }
            hasher.putBytes(bytes);
        });
        String fingerprint = hasher.hash().toString().substring(0, 32);
        String slot = "c" + Hashing.sha256().hashString(VersionedTree.canonicalId(cs.id().value()),
                StandardCharsets.UTF_8).toString().substring(0, 24);
        return new Prepared(cs, root, cs.id().value(), slot, fingerprint, values);
    }

    static byte[] bytesOf(RawBsonDocument raw) {
        java.nio.ByteBuffer buffer = raw.getByteBuffer().asNIO();
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        return bytes;
    }

    /**
     * One write attempt of a change set: what the root's compare-and-set needs, from a writer or a pending entry, and
     * the base tree as its root carried it when this attempt was staged (null when it did not, or is not known).
     */
    record Attempt(Object rootId, String slot, Object id, long base, long version, ObjectId att, int size,
                   String fingerprint, Document meta, VersionedTree baseTree, Bson baseTime) {

        static Attempt of(Prepared p, ObjectId att, VersionedTree baseTree, Bson baseTime) {
            return new Attempt(p.rootId(), p.slot(), p.id(), p.base(), p.version(), att, p.size(), p.fingerprint(),
                    p.changeSet().meta().orElse(null), baseTree, baseTime);
        }

        /** The attempt a pending {@code entry} holds, with the base's time copied when {@code root} is at its base. */
        static Attempt of(Object rootId, String slot, Document entry, Document root) {
            long base = number(entry, BASE);
            return new Attempt(rootId, slot, entry.get(CS), base, number(entry, V),
                    entry.getObjectId(ATT), (int) number(entry, N), entry.getString(FP),
                    entry.get(META, Document.class), null, VersionWrites.baseTime(base, root));
        }

        OperationId operationId() {
            return new OperationId(id);
        }
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

    /**
     * Commits {@code p} directly: writes its item versions, then compare-and-sets the root (two round trips), made
     * from {@code read}, the root as read with the base version ({@link VersionReads#current}), for a change set
     * nobody else may have used yet (a fresh id). Nothing is staged: a writer that goes quiet before its
     * compare-and-set leaves documents no reader sees, which clean-up deletes once the root moved past their base
     * or, if it did not, once it moved the root's fence on, which this commit's compare-and-set requires unmoved.
     *
     * @throws VersionConflictException if another change set was committed on the base first, or clean-up fenced
     *                                  this writer off (its documents are then deleted again)
     */
    public Committed commitDirect(Prepared p, VersionReads.Current read) {
        if (read.tree().version() != p.base()) {
            throw new IllegalArgumentException("the change set's base " + p.base() + " is not the version read, "
                    + read.tree().version());
        }
        if (read.unsettledCount() >= config.settleThreshold()) {
            settleBeforeStaging(p.rootId());
        }
        Attempt a = Attempt.of(p, new ObjectId(), read.tree(), baseTime(p.base(), read.slot(),
                read.tree().committedAt().map(java.util.Date::from).orElse(null), read.unsettledCount()));
        List<Document> docs = new ArrayList<>(p.size());
        p.values().forEach((item, value) -> docs.add(itemDocument(a.rootId(), item, a.version(), a.att(), a.id(),
                value).append(DIRECT, true)));
        store.insertItemVersions(p.id(), docs);
        Bson filter = and(eq("_id", a.rootId()), eq(VERSION, a.base()), VersionSchema.fenceIs(read.fence()),
                exists(PENDING + "." + a.slot(), false), exists(UNSETTLED + "." + a.slot(), false));
        if (store.commit(a.id(), filter, Updates.combine(committing(a), carrying(p, a)))) {
            return committedNow(a);
        }
        return afterFailedDirect(p, a);
    }

    /** Counts, reports and returns an attempt this call committed. */
    Committed committedNow(Attempt a) {
        counters.committed.increment();
        Listeners.call(name, () -> listener.onCommitted(a.rootId(), a.operationId(), a.version(), false));
        LOG.debug("[{}] committed change set {} as version {} of root {}", name, a.id(), a.version(), a.rootId());
        return new Committed(a.version(), true);
    }

    /**
     * A direct compare-and-set matched nothing: committed anyway (its reply was lost), or the change set was
     * committed by another call, or the root moved or was fenced: then this attempt's documents are deleted.
     */
    Committed afterFailedDirect(Prepared p, Attempt a) {
        Document root = store.rootWithRecordOf(a.rootId(), a.id());
        if (root == null) {
            throw new UnknownRootException(name, a.rootId());
        }
        if (isCommitted(root, a)) {
            return committedNow(a);
        }
        deleteAttempt(a.rootId(), a.version(), a.att());
        Optional<Long> done = committedVersionOf(root, p, recordIn(root));
        if (done.isPresent()) {
            return new Committed(done.get(), false);
        }
        long current = number(root, VERSION);
        counters.conflicts.increment();
        Listeners.call(name, () -> listener.onConflict(a.rootId(), a.operationId(), a.base(), current));
        throw new VersionConflictException(name, a.id(), a.rootId(), a.base(), current);
    }

    static Document recordIn(Document rootWithRecord) {
        List<Document> records = rootWithRecord.getList("record", Document.class, List.of());
        return records.isEmpty() ? null : records.get(0);
    }

    /** Stages {@code p} and writes its item documents, for recovery (or a later call) to commit: two round trips. */
    public void submit(Prepared p) {
        Attempt a = stage(p);
        if (a.att() != null) {
            writeItems(p, a);
        }
    }

    /**
     * {@link #commit} as the common protocol: committed, or aborted ({@link VersionFields#ABANDONED_STATE}) when the
     * change set lost to another commit after staging or was abandoned by recovery.
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
        if (compareAndSetCommit(attempt, carrying(p, attempt))) {
            return committedNow(attempt);
        }
        return afterFailedCommit(attempt);
    }

    Committed afterFailedCommit(Attempt a) {
        Document root = store.findRoot(a.rootId());
        if (isCommitted(root, a)) {
            return new Committed(a.version(), false);
        }
        Document entry = pending(root).get(a.slot(), Document.class);
        long current = number(root, VERSION);
        if (entry != null && a.att().equals(entry.getObjectId(ATT))) {
            if (current != a.base()) {
                counters.conflicts.increment();
                Listeners.call(name, () -> listener.onConflict(a.rootId(), a.operationId(), a.base(),
                        current));
                abandon(a, "lost to another commit: the root is at version " + current);
                throw new VersionConflictException(name, a.id(), a.rootId(), a.base(), current);
            }
            throw new ConsistencyException(name, a.id(), "the commit of root " + a.rootId()
                    + " matched nothing although the root is at its base and the attempt is staged");
        }
        if (current != a.base()) {
            // the attempt is gone and the root moved past its base: another call of this change set (a retry that
            // adopted the attempt) lost to another commit and abandoned it, or recovery did; either way it lost
            counters.conflicts.increment();
            Listeners.call(name, () -> listener.onConflict(a.rootId(), a.operationId(), a.base(), current));
            throw new VersionConflictException(name, a.id(), a.rootId(), a.base(), current);
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
            // the root as it was, with the tree it carries when it carries one: the base tree this commit's
            // compare-and-set then writes on from
            VersionStore.Staged sent = config.inlineTreeBytes() == 0
                    ? store.stage(p.id(), filter, att -> stageUpdate(p, att), VERSION, COMMITTED_AT,
                            VersionSchema.SLOT, UNSETTLED_COUNT)
                    : store.stage(p.id(), filter, att -> stageUpdate(p, att), VERSION, COMMITTED_AT,
                            VersionSchema.SLOT, UNSETTLED_COUNT, META, TREE, VersionSchema.TREE_V);
            if (sent.matched() == 1) {
                counters.staged.increment();
                Listeners.call(name, () -> listener.onStaged(p.rootId(), p.changeSet().id(), p
                        .version()));
                return Attempt.of(p, sent.att(), baseCarried(p, sent.root()), baseTime(p.base(), sent.root()));
            }
            Document root = store.findRoot(p.rootId());
            Document staged = pending(root).get(p.slot(), Document.class);
            if (staged != null) {
                if (!Objects.equals(staged.get(CS), p.id())) {
                    throw new ConsistencyException(name, p.id(), "staging slot " + p.slot() + " of root " + p
                            .rootId()
                            + " holds change set " + staged.get(CS));
                }
                checkFingerprint(p, staged.getString(FP));
                return Attempt.of(p.rootId(), p.slot(), staged, root);
            }
            Optional<Long> done = committedVersionOf(root, p);
            if (done.isPresent()) {
                return new Attempt(p.rootId(), p.slot(), p.id(), p.base(), done.get(), null, p.size(),
                        p.fingerprint(), null, null, null);
            }
            long current = number(root, VERSION);
            if (p.base() < current) {
                counters.conflicts.increment();
                Listeners.call(name, () -> listener.onConflict(p.rootId(), p.changeSet().id(), p.base(),
                        current));
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

    Bson stageUpdate(Prepared p, ObjectId att) {
        // whole subdocuments, and the time in a map of its own: the embedded server applies one $set of a
        // subdocument much faster than one $set per field
        Document entry = new Document(CS, p.id()).append(ATT, att).append(BASE, p.base()).append(V, p.version())
                .append(N, p.size()).append(FP, p.fingerprint());
        p.changeSet().meta().ifPresent(meta -> entry.append(META, meta));
        return Updates.combine(Updates.set(PENDING + "." + p.slot(), entry),
                Updates.currentDate(PENDING_AT + "." + p.slot()), Updates.inc(PENDING_COUNT, 1));
    }

    void checkFingerprint(Prepared p, String stored) {
        if (!p.fingerprint().equals(stored)) {
            throw new IdempotencyConflictException(name, p.id(), "change set id " + p.id() + " on root "
                    + p.rootId() + " was already used for a different change set");
        }
    }

    Optional<Long> committedVersionOf(Document root, Prepared p) {
        return committedVersionOf(root, p, store.recordOfChangeSet(p.rootId(), p.id()));
    }

    /** The version {@code p} was committed as, from the root and the change set's record read before. */
    Optional<Long> committedVersionOf(Document root, Prepared p, Document record) {
        for (Object value : unsettled(root).values()) {
            Document entry = (Document) value;
            if (Objects.equals(entry.get(CS), p.id())) {
                checkFingerprint(p, entry.getString(FP));
                return Optional.of(number(entry, V));
            }
        }
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
        store.insertItemVersions(p.id(), docs);
    }

    static Document itemDocument(Object root, Object item, long version, ObjectId att, Object cs,
                                         Optional<? extends org.bson.conversions.Bson> value) {
        Document d = new Document("_id", VersionSchema.itemVersionId(root, item, version, att)).append(ROOT, root)
                .append(ITEM, item)
                .append(VERSION, version).append(ATT, att).append(CS, cs).append(COMMITTED, false)
                .append(UNTIL, OPEN).append(DELETED, value.isEmpty());
        value.ifPresent(v -> d.append(VALUE, v));
        return d;
    }

    /**
     * What a commit sets on the root, staged or direct: the version, and under {@code unsettled.<slot>} the attempt
     * that is that version, with its meta and time.
     */
    static Bson committing(Attempt a) {
        List<Bson> updates = new ArrayList<>(List.of(Updates.set(VERSION, a.version()),
                Updates.set(UNSETTLED + "." + a.slot(), committedEntry(a)), Updates.set(META, a.meta()),
                Updates.currentDate(COMMITTED_AT), Updates.set(VersionSchema.SLOT, a.slot()),
                Updates.inc(UNSETTLED_COUNT, 1)));
        if (a.baseTime() != null) {
            updates.add(a.baseTime());
        }
        return Updates.combine(updates);
    }

    /**
     * The copy of the base version's commit time into its unsettled entry, which the commit that replaces it as the
     * root's version writes (the base's time is the root's own until then: {@link VersionSchema#COMMITTED_AT}), from
     * {@code root} as read at the base; null when it was read at another version or holds no such time.
     */
    static Bson baseTime(long base, Document root) {
        if (root == null || !(root.get(VERSION) instanceof Number version) || version.longValue() != base) {
            return null;
        }
        return baseTime(base, root.get(VersionSchema.SLOT), root.get(COMMITTED_AT) instanceof java.util.Date d ? d
                : null, number(root, UNSETTLED_COUNT));
    }

    /**
     * {@link #baseTime(long, Document)} from its parts: nothing for version 0, which has no entry, nor when no
     * version was unsettled (the base's entry is settled, its time recorded). A copy that lands after settlement
     * removed the entry leaves a time without an entry, which the next settlement of the root removes.
     */
    static Bson baseTime(long base, Object slot, java.util.Date committedAt, long unsettledCount) {
        if (base == 0 || committedAt == null || unsettledCount == 0 || !VersionSchema.isSlot(slot)) {
            return null;
        }
        return Updates.set(UNSETTLED_AT + "." + slot, committedAt);
    }

    /** What the root records of a committed attempt under {@code unsettled.<slot>}: version N is that attempt. */
    static Document committedEntry(Attempt a) {
        Document entry = new Document(CS, a.id()).append(ATT, a.att()).append(V, a.version()).append(N, a.size())
                .append(FP, a.fingerprint());
        if (a.meta() != null) {
            entry.append(META, a.meta());
        }
        return entry;
    }

    /**
     * What a direct commit of {@code p} on {@code base} writes on the root besides the commit itself: the tree it
     * makes, whole ({@link VersionSchema#TREE}), what it replaces ({@link VersionSchema#UNDO}) and the base's meta and
     * commit time ({@link VersionSchema#PRIOR}), all of {@code p}'s version; or, when they would not fit in
     * {@link VersionedStoreConfig#inlineTreeBytes()}, the removal of what the root carried. The compare-and-set
     * requires the root at the base read, so the tree written is the committed one.
     */
    Bson carrying(Prepared p, Attempt a) {
        VersionedTree base = a.baseTree();
        if (config.inlineTreeBytes() == 0 || base == null || base.version() != a.base()) {
            return notCarrying();
        }
        Map<Object, Object> tree = new TreeMap<>(java.util.Comparator.comparing(VersionedTree::canonicalId));
        tree.putAll(base.items());
        List<Document> undo = new ArrayList<>(p.size());
        p.values().forEach((item, value) -> {
            Object before = tree.remove(item);
            Document entry = new Document(VersionSchema.I, item);
            if (before != null) {
                entry.append(V, before);
            }
            undo.add(entry);
            value.ifPresent(raw -> tree.put(item, raw));
        });
        List<Document> entries = new ArrayList<>(tree.size());
        tree.forEach((item, value) -> entries.add(new Document(VersionSchema.I, item).append(V, value)));
        Document prior = new Document();
        if (base.version() > 0) {
            // what a read as of the base version answers: its meta and commit time as the root held them
            base.meta().ifPresent(meta -> prior.append(META, meta));
            base.committedAt().ifPresent(at -> prior.append(AT, java.util.Date.from(at)));
        }
        Document carried = new Document(TREE, entries).append(UNDO, undo).append(PRIOR, prior);
        if (new RawBsonDocument(carried, store.codecs().get(Document.class)).getByteBuffer().remaining()
                > config.inlineTreeBytes()) {
            return notCarrying();
        }
        return Updates.combine(Updates.set(TREE, entries), Updates.set(VersionSchema.TREE_V, p.version()),
                Updates.set(UNDO, undo), Updates.set(PRIOR, prior));
    }

    /** The removal of the tree a root carries: a commit that does not write it leaves none behind. */
    static Bson notCarrying() {
        return Updates.combine(Updates.unset(TREE), Updates.unset(VersionSchema.TREE_V), Updates.unset(UNDO),
                Updates.unset(PRIOR));
    }

    /**
     * The base tree as the root a stage matched carried it, when it carried the tree of {@code p}'s base: the stage
     * required the root at the base, and so does the compare-and-set after it.
     */
    static VersionedTree baseCarried(Prepared p, Document root) {
        Map<Object, Document> tree = root == null ? null : VersionReads.carriedTree(root);
        if (tree == null || number(root, VERSION) != p.base()) {
            return null;
        }
        return new VersionedTree(p.rootId(), p.base(), tree, Optional.ofNullable(root.get(META, Document.class)),
                Optional.ofNullable(root.getDate(COMMITTED_AT)).map(java.util.Date::toInstant));
    }

    /** {@link #compareAndSetCommit(Attempt, Bson)} of an attempt whose base tree is not known here. */
    boolean compareAndSetCommit(Attempt a) {
        return compareAndSetCommit(a, notCarrying());
    }

    /**
     * The commit: root still at the base and this attempt still staged, writing {@code carried} too
     * ({@link #carrying}). Whether it matched.
     */
    boolean compareAndSetCommit(Attempt a, Bson carried) {
        Bson filter = and(eq("_id", a.rootId()), eq(VERSION, a.base()),
                eq(PENDING + "." + a.slot() + "." + ATT, a.att()));
        Bson update = Updates.combine(committing(a), Updates.unset(PENDING + "." + a.slot()),
                Updates.unset(PENDING_AT + "." + a.slot()), Updates.inc(PENDING_COUNT, -1), carried);
        return store.commit(a.id(), filter, update);
    }

    boolean isCommitted(Document root, Attempt a) {
        Document entry = unsettledEntry(root, a.version());
        if (entry != null) {
            return a.att().equals(entry.getObjectId(ATT));
        }
        if (number(root, VERSION) < a.version()) {
            return false;
        }
        Document record = store.recordOfVersion(a.id(), a.rootId(), a.version(), "look up version");
        return record != null && a.att().equals(record.getObjectId(ATT));
    }

    /** Takes the attempt out of the root's pending set (if it is still there), then deletes its documents. */
    boolean abandon(Attempt a, String reason) {
        long matched = store.abandon(a.id(), a.rootId(), a.slot(), a.att());
        if (matched == 0) {
            return false;
        }
        counters.abandoned.increment();
        LOG.info("[{}] abandoned change set {} on root {} (version {}): {}", name, a.id(), a.rootId(), a
                .version(),
                reason);
        Listeners.call(name, () -> listener.onAbandoned(a.rootId(), a.operationId(), reason));
        deleteAttempt(a.rootId(), a.version(), a.att());
        return true;
    }

    long deleteAttempt(Object rootId, long version, ObjectId att) {
        long deleted = store.deleteAttemptItems(rootId, version, att);
        counters.cleanedDocuments.add(deleted);
        return deleted;
    }

    /** Settles a root that reached the threshold before staging on it; a failure is left to maintenance. */
    void settleBeforeStaging(Object rootId) {
        try {
            settlement.settleRoot(rootId);
        } catch (ConsistencyException | MongoException e) {
            LOG.warn("[{}] settling root {} before staging failed (maintenance will settle it): {}", name,
                    rootId,
                    e.toString());
        }
    }

    /** Creates root {@code rootId} at version 0 with no items; false if it exists. */
    public boolean createRoot(Object rootId) {
        Object id = store.rootId(rootId);
        Document root = new Document("_id", id).append(VERSION, 0L).append(FLOOR, 0L)
                .append(PENDING, new Document()).append(PENDING_AT, new Document()).append(PENDING_COUNT, 0)
                .append(UNSETTLED, new Document()).append(UNSETTLED_AT, new Document()).append(UNSETTLED_COUNT, 0)
                .append(ABANDONED, 0L).append(META, null);
        if (config.inlineTreeBytes() > 0) {
            // version 0 is the empty tree: the first commit, staged or direct, writes on from it
            root.append(TREE, List.of()).append(VersionSchema.TREE_V, 0L).append(UNDO, List.of())
                    .append(PRIOR, new Document());
        }
        return store.createRoot(id, root);
    }

}
