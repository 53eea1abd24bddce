package dev.consistencykit.versioning.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lt;
import static dev.consistencykit.versioning.internal.VersionFields.ABANDONED;
import static dev.consistencykit.versioning.internal.VersionFields.ABANDONED_STATE;
import static dev.consistencykit.versioning.internal.VersionFields.ATT;
import static dev.consistencykit.versioning.internal.VersionFields.BASE;
import static dev.consistencykit.versioning.internal.VersionFields.COMMITTED;
import static dev.consistencykit.versioning.internal.VersionFields.COMMITTED_AT;
import static dev.consistencykit.versioning.internal.VersionFields.COMMITTED_STATE;
import static dev.consistencykit.versioning.internal.VersionFields.CS;
import static dev.consistencykit.versioning.internal.VersionFields.DELETED;
import static dev.consistencykit.versioning.internal.VersionFields.FP;
import static dev.consistencykit.versioning.internal.VersionFields.ITEM;
import static dev.consistencykit.versioning.internal.VersionFields.LOG;
import static dev.consistencykit.versioning.internal.VersionFields.MAX_DOCUMENT_BYTES;
import static dev.consistencykit.versioning.internal.VersionFields.MAX_META_BYTES;
import static dev.consistencykit.versioning.internal.VersionFields.META;
import static dev.consistencykit.versioning.internal.VersionFields.N;
import static dev.consistencykit.versioning.internal.VersionFields.OPEN;
import static dev.consistencykit.versioning.internal.VersionFields.PENDING;
import static dev.consistencykit.versioning.internal.VersionFields.PENDING_AT;
import static dev.consistencykit.versioning.internal.VersionFields.PENDING_COUNT;
import static dev.consistencykit.versioning.internal.VersionFields.ROOT;
import static dev.consistencykit.versioning.internal.VersionFields.STAGE_ATTEMPTS;
import static dev.consistencykit.versioning.internal.VersionFields.UNSETTLED;
import static dev.consistencykit.versioning.internal.VersionFields.UNSETTLED_AT;
import static dev.consistencykit.versioning.internal.VersionFields.UNSETTLED_COUNT;
import static dev.consistencykit.versioning.internal.VersionFields.UNTIL;
import static dev.consistencykit.versioning.internal.VersionFields.V;
import static dev.consistencykit.versioning.internal.VersionFields.VALUE;
import static dev.consistencykit.versioning.internal.VersionFields.VERSION;
import static dev.consistencykit.versioning.internal.VersionFields.encodedSize;
import static dev.consistencykit.versioning.internal.VersionFields.normalize;
import static dev.consistencykit.versioning.internal.VersionFields.number;
import static dev.consistencykit.versioning.internal.VersionFields.pending;
import static dev.consistencykit.versioning.internal.VersionFields.unsettled;
import static dev.consistencykit.versioning.internal.VersionFields.unsettledEntry;

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

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.model.InsertManyOptions;
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
import dev.consistencykit.versioning.VersionConflictException;
import dev.consistencykit.versioning.VersionedStoreConfig;
import dev.consistencykit.versioning.VersionedTree;
import dev.consistencykit.versioning.internal.VersionEngine.Committed;
import dev.consistencykit.versioning.internal.VersionEngine.Prepared;

/**
 * The write protocol: stage on the root, write the item versions, compare-and-set the root, abandon a loser.
 */
final class VersionWrites {

    private final VersionFields fields;
    private final VersionedStoreConfig config;
    private final VersionSettlement settlement;

    /** The writes of a change set, over the shared fields and the settlement staging may need. */
    VersionWrites(VersionFields fields, VersionSettlement settlement) {
        this.fields = fields;
        this.config = fields.config;
        this.settlement = settlement;
    }

    // ---------------------------------------------------------------- write

    /** Validates {@code cs} completely (ids, keys, sizes) and fingerprints it. Sends nothing. */
    public Prepared prepare(ChangeSet cs) {
        Objects.requireNonNull(cs, "changeSet");
        Object root = fields.rootId(cs.rootId());
        if (cs.baseVersion() < 0) {
            throw new InvalidInputException(fields.name, "baseVersion", "baseVersion must be >= 0, was " + cs
                    .baseVersion());
        }
        if (cs.changes().isEmpty()) {
            throw new InvalidInputException(fields.name, "changes",
                    "changes must not be empty: a change set must put or delete at least one item"
                    + " (change set " + cs.id() + " on root " + root + " is empty)");
        }
        // each value is encoded once: its bytes are checked for size, fingerprinted, and inserted as they are
        Map<Object, Optional<RawBsonDocument>> values = new LinkedHashMap<>();
        TreeMap<String, byte[]> canonical = new TreeMap<>();
        for (Map.Entry<Object, Optional<Object>> change : cs.changes().entrySet()) {
            Object item = normalize(Ids.documentId(fields.name, "itemId", change.getKey(), fields.items
                    .getCodecRegistry()));
            String key = VersionedTree.canonicalId(item);
            if (change.getValue().isPresent()) {
                // encoded once with the database's own codecs (a UUID or a POJO the caller's client stores is
                // accepted), checked as BSON, and these bytes are what is stored
                BsonDocument value = Values.plainDocument(fields.name, "value of item " + Values.show(item),
                        change.getValue().get(), fields.items.getCodecRegistry());
                RawBsonDocument raw = new RawBsonDocument(value, new BsonDocumentCodec());
                int bytes = encodedSize(itemDocument(root, item, cs.version(), new ObjectId(), cs.id().value(),
                        Optional.empty())) + 1 + VALUE.length() + 1 + raw.getByteBuffer().remaining();
                if (bytes > MAX_DOCUMENT_BYTES) {
                    throw new InvalidInputException(fields.name, "value of item " + item, "item " + item
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
            BsonDocument encodedMeta = Values.plainDocument(fields.name, "meta", meta, fields.roots.getCodecRegistry());
            byte[] bytes = bytesOf(new RawBsonDocument(encodedMeta, new BsonDocumentCodec()));
            if (bytes.length > MAX_META_BYTES) {
                throw new InvalidInputException(fields.name, "meta", "meta is " + bytes.length
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

    /** One write attempt of a change set: what the root's compare-and-set needs, from a writer or a pending entry. */
    record Attempt(Object rootId, String slot, Object id, long base, long version, ObjectId att, int size,
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
        if (compareAndSetCommit(attempt)) {
            fields.committed.increment();
            Listeners.call(fields.name, () -> fields.listener.onCommitted(attempt.rootId(), attempt.operationId(),
                    attempt.version(), false));
            LOG.debug("[{}] committed change set {} as version {} of root {}", fields.name, p.id(), p.version(), p
                    .rootId());
            return new Committed(p.version(), true);
        }
        return afterFailedCommit(attempt);
    }

    Committed afterFailedCommit(Attempt a) {
        Document root = fields.findRoot(a.rootId());
        if (isCommitted(root, a)) {
            return new Committed(a.version(), false);
        }
        Document entry = pending(root).get(a.slot(), Document.class);
        long current = number(root, VERSION);
        if (entry != null && a.att().equals(entry.getObjectId(ATT))) {
            if (current != a.base()) {
                fields.conflicts.increment();
                Listeners.call(fields.name, () -> fields.listener.onConflict(a.rootId(), a.operationId(), a.base(),
                        current));
                abandon(a, "lost to another commit: the root is at version " + current);
                throw new VersionConflictException(fields.name, a.id(), a.rootId(), a.base(), current);
            }
            throw new ConsistencyException(fields.name, a.id(), "the commit of root " + a.rootId()
                    + " matched nothing although the root is at its base and the attempt is staged");
        }
        throw new ChangeSetAbandonedException(fields.name, a.id(), a.rootId());
    }

    /**
     * Records the attempt on the root (one conditional update), or finds the change set already staged or committed.
     * Returns an attempt whose {@code att} is null when the change set is already committed (its version is then the
     * committed one).
     */
    public Attempt stage(Prepared p) {
        fields.requiredIndexes.verify();
        Bson filter = and(eq("_id", p.rootId()), eq(VERSION, p.base()), exists(PENDING + "." + p.slot(), false),
                exists(UNSETTLED + "." + p.slot(), false), lt(UNSETTLED_COUNT, config.settleThreshold()));
        for (int round = 0; round < STAGE_ATTEMPTS; round++) {
            // Every request, a retry too, stages a new attempt id. A request whose reply was lost may have staged
            // its attempt, and recovery may have abandoned that attempt before the retry: sending the same id again
            // would bring the abandoned attempt back while recovery goes on to delete its documents. A retry that
            // finds the earlier request's attempt still staged adopts it below.
            ObjectId[] sent = new ObjectId[1];
            long matched = fields.retry.execute(fields.name, p.id(), "stage change set", () -> {
                sent[0] = new ObjectId();
                return fields.roots.updateOne(filter, stageUpdate(p, sent[0])).getMatchedCount();
            });
            if (matched == 1) {
                fields.staged.increment();
                Listeners.call(fields.name, () -> fields.listener.onStaged(p.rootId(), p.changeSet().id(), p
                        .version()));
                return Attempt.of(p, sent[0]);
            }
            Document root = fields.findRoot(p.rootId());
            Document staged = pending(root).get(p.slot(), Document.class);
            if (staged != null) {
                if (!Objects.equals(staged.get(CS), p.id())) {
                    throw new ConsistencyException(fields.name, p.id(), "staging slot " + p.slot() + " of root " + p
                            .rootId()
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
                fields.conflicts.increment();
                Listeners.call(fields.name, () -> fields.listener.onConflict(p.rootId(), p.changeSet().id(), p.base(),
                        current));
                throw new VersionConflictException(fields.name, p.id(), p.rootId(), p.base(), current);
            }
            if (p.base() > current) {
                throw new InvalidInputException(fields.name, "baseVersion", "baseVersion " + p.base()
                        + " is ahead of root " + p.rootId() + "'s committed version " + current);
            }
            if (number(root, UNSETTLED_COUNT) >= config.settleThreshold()) {
                settleBeforeStaging(p.rootId());
            }
            // otherwise the root is at the base and the slot free again: it changed between the update and the read
        }
        throw new ConsistencyException(fields.name, p.id(), "could not stage on root " + p.rootId() + " after "
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
            throw new IdempotencyConflictException(fields.name, p.id(), "change set id " + p.id() + " on root "
                    + p.rootId() + " was already used for a different change set");
        }
    }

    Optional<Long> committedVersionOf(Document root, Prepared p) {
        for (Object value : unsettled(root).values()) {
            Document entry = (Document) value;
            if (Objects.equals(entry.get(CS), p.id())) {
                checkFingerprint(p, entry.getString(FP));
                return Optional.of(number(entry, V));
            }
        }
        Document record = fields.retry.execute(fields.name, p.id(), "look up change set",
                () -> fields.history.find(and(eq(ROOT, p.rootId()), eq(CS, p.id()))).first());
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
            fields.retry.run(fields.name, p.id(), "write item versions",
                    () -> fields.items.insertMany(docs, new InsertManyOptions().ordered(false)));
        } catch (MongoBulkWriteException e) {
            for (BulkWriteError error : e.getWriteErrors()) {
                if (error.getCategory() != ErrorCategory.DUPLICATE_KEY) {
                    throw e;
                }
            }
        }
    }

    static Document itemDocument(Object root, Object item, long version, ObjectId att, Object cs,
                                         Optional<? extends org.bson.conversions.Bson> value) {
        Document d = new Document("_id", new ObjectId()).append(ROOT, root).append(ITEM, item)
                .append(VERSION, version).append(ATT, att).append(CS, cs).append(COMMITTED, false)
                .append(UNTIL, OPEN).append(DELETED, value.isEmpty());
        value.ifPresent(v -> d.append(VALUE, v));
        return d;
    }

    /** The commit: root still at the base and this attempt still staged. Whether it matched. */
    boolean compareAndSetCommit(Attempt a) {
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
        return fields.retry.execute(fields.name, a.id(), "commit change set",
                () -> fields.roots.updateOne(filter, update).getMatchedCount()) == 1;
    }

    boolean isCommitted(Document root, Attempt a) {
        Document entry = unsettledEntry(root, a.version());
        if (entry != null) {
            return a.att().equals(entry.getObjectId(ATT));
        }
        if (number(root, VERSION) < a.version()) {
            return false;
        }
        Document record = fields.retry.execute(fields.name, a.id(), "look up version",
                () -> fields.history.find(and(eq(ROOT, a.rootId()), eq(V, a.version()))).first());
        return record != null && a.att().equals(record.getObjectId(ATT));
    }

    /** Takes the attempt out of the root's pending set (if it is still there), then deletes its documents. */
    boolean abandon(Attempt a, String reason) {
        long matched = fields.retry.execute(fields.name, a.id(), "abandon change set", () -> fields.roots.updateOne(
                and(eq("_id", a.rootId()), eq(PENDING + "." + a.slot() + "." + ATT, a.att())),
                Updates.combine(Updates.unset(PENDING + "." + a.slot()), Updates.unset(PENDING_AT + "." + a.slot()),
                        Updates.inc(PENDING_COUNT, -1),
                        Updates.inc(ABANDONED, 1L))).getMatchedCount());
        if (matched == 0) {
            return false;
        }
        fields.abandoned.increment();
        LOG.info("[{}] abandoned change set {} on root {} (version {}): {}", fields.name, a.id(), a.rootId(), a
                .version(),
                reason);
        Listeners.call(fields.name, () -> fields.listener.onAbandoned(a.rootId(), a.operationId(), reason));
        deleteAttempt(a.rootId(), a.version(), a.att());
        return true;
    }

    long deleteAttempt(Object rootId, long version, ObjectId att) {
        long deleted = fields.retry.execute(fields.name, rootId, "delete abandoned item versions", () -> fields.items
                .deleteMany(
                and(eq(ROOT, rootId), eq(VERSION, version), eq(ATT, att), eq(COMMITTED, false))).getDeletedCount());
        fields.cleanedDocuments.add(deleted);
        return deleted;
    }

    /** Settles a root that reached the threshold before staging on it; a failure is left to maintenance. */
    void settleBeforeStaging(Object rootId) {
        try {
            settlement.settleRoot(rootId);
        } catch (ConsistencyException | MongoException e) {
            LOG.warn("[{}] settling root {} before staging failed (maintenance will settle it): {}", fields.name,
                    rootId,
                    e.toString());
        }
    }
}
