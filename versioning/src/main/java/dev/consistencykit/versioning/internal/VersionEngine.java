package dev.consistencykit.versioning.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.gt;
import static dev.consistencykit.versioning.internal.VersionFields.ABANDONED;
import static dev.consistencykit.versioning.internal.VersionFields.ABANDONED_STATE;
import static dev.consistencykit.versioning.internal.VersionFields.AT;
import static dev.consistencykit.versioning.internal.VersionFields.COMMITTED_STATE;
import static dev.consistencykit.versioning.internal.VersionFields.CS;
import static dev.consistencykit.versioning.internal.VersionFields.FLOOR;
import static dev.consistencykit.versioning.internal.VersionFields.META;
import static dev.consistencykit.versioning.internal.VersionFields.PENDING;
import static dev.consistencykit.versioning.internal.VersionFields.PENDING_AT;
import static dev.consistencykit.versioning.internal.VersionFields.PENDING_COUNT;
import static dev.consistencykit.versioning.internal.VersionFields.STAGED;
import static dev.consistencykit.versioning.internal.VersionFields.UNSETTLED;
import static dev.consistencykit.versioning.internal.VersionFields.UNSETTLED_AT;
import static dev.consistencykit.versioning.internal.VersionFields.UNSETTLED_COUNT;
import static dev.consistencykit.versioning.internal.VersionFields.V;
import static dev.consistencykit.versioning.internal.VersionFields.VERSION;
import static dev.consistencykit.versioning.internal.VersionFields.number;
import static dev.consistencykit.versioning.internal.VersionFields.pending;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.bson.Document;
import org.bson.RawBsonDocument;

import com.mongodb.MongoException;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Projections;

import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.OperationView;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.core.spi.MongoErrors;
import dev.consistencykit.core.spi.PatternInspection;
import dev.consistencykit.core.spi.PatternRecovery;
import dev.consistencykit.core.spi.PatternSetup;
import dev.consistencykit.core.spi.WriteConcerns;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.ItemVersion;
import dev.consistencykit.versioning.VersionInfo;
import dev.consistencykit.versioning.VersionedStoreConfig;
import dev.consistencykit.versioning.VersionedStoreListener;
import dev.consistencykit.versioning.VersionedStoreMetrics;
import dev.consistencykit.versioning.VersionedTree;

/**
 * The versioned-store protocol (see the package documentation of {@code dev.consistencykit.versioning}): stage on the
 * root, write the item versions, commit by compare-and-set on the root; read the root, then the item versions it
 * commits; settle, clean up, prune and recover from any number of processes.
 */
public final class VersionEngine implements PatternSetup, PatternRecovery, PatternInspection<VersionedStoreMetrics> {

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

    private final VersionFields fields;
    private final VersionSettlement settlement;
    private final VersionWrites writes;
    private final VersionReads reads;
    private final VersionMaintenance maintenance;

    /**
     * The engine over {@code database} (already checked for an acknowledged write concern): the shared fields, the
     * settlement of committed versions, the writes of a change set, the reads, and recovery with the maintenance
     * passes.
     */
    public VersionEngine(VersionedStoreConfig config, MongoDatabase database, ServerClock clock,
                         VersionedStoreListener listener) {
        this.fields = new VersionFields(config, database, clock, listener);
        this.settlement = new VersionSettlement(fields);
        this.writes = new VersionWrites(fields, settlement);
        this.reads = new VersionReads(fields);
        this.maintenance = new VersionMaintenance(fields, writes, settlement);
    }

    /** Every index the store's queries use. */
    @Override
    public void ensureIndexes() {
        fields.ensureIndexes();
    }

    /** {@code rootId} checked as a document id. */
    public Object rootId(Object rootId) {
        return fields.rootId(rootId);
    }

    // ---------------------------------------------------------------- writes

    /** Validates {@code cs} completely (ids, keys, sizes) and fingerprints it. Sends nothing. */
    public Prepared prepare(ChangeSet cs) {
        return writes.prepare(cs);
    }

    /** Stages, writes and commits {@code p}: three round trips. A change set already committed returns its version. */
    public Committed commit(Prepared p) {
        return writes.commit(p);
    }

    /** Stages {@code p} and writes its item documents, for recovery (or a later call) to commit: two round trips. */
    public void submit(Prepared p) {
        writes.submit(p);
    }

    /** {@link #commit} as the common protocol: committed, or aborted when it lost to another commit or to recovery. */
    public OperationResult apply(Prepared p) {
        return writes.apply(p);
    }

    // ---------------------------------------------------------------- reads

    /** The committed tree at the root's current version. */
    public VersionedTree read(Object rootId) {
        return reads.read(rootId);
    }

    /** The committed tree as of {@code version}. */
    public VersionedTree readAsOf(Object rootId, long version) {
        return reads.readAsOf(rootId, version);
    }

    /** One item at the root's current version. */
    public Optional<Document> get(Object rootId, Object itemId) {
        return reads.get(rootId, itemId);
    }

    /** Every kept version of one item. */
    public List<ItemVersion> history(Object rootId, Object itemId) {
        return reads.history(rootId, itemId);
    }

    /** Every kept version of a root. */
    public List<VersionInfo> versions(Object rootId) {
        return reads.versions(rootId);
    }

    // ---------------------------------------------------------------- maintenance

    /** Decides every change set staged longer than {@code staleAfter}, then settles, cleans up and prunes. */
    @Override
    public RecoveryReport recover(Duration staleAfter) {
        return maintenance.recover(staleAfter);
    }

    /** {@link #recover(Duration)} of the change set {@code id} alone. */
    @Override
    public RecoveryReport recoverOne(Object id, Duration staleAfter) {
        return maintenance.recover(staleAfter, id);
    }

    /**
     * The change set {@code id} while it is staged (its entry on its root), and its root as a reader reads it now
     * ({@link #read}: the committed version, without the staged change). Empty once it is committed or abandoned: the
     * history is indexed by root, not by change set alone.
     */
    @Override
    public Optional<OperationView> describe(Object id) {
        for (Document root : fields.roots.find(gt(PENDING_COUNT, 0)).projection(Projections.include(PENDING,
                PENDING_AT)).limit(SCANNED_ROOTS)) {
            for (Object value : pending(root).values()) {
                Document entry = (Document) value;
                if (id.equals(entry.get(CS))) {
                    Object rootId = root.get("_id");
                    VersionedTree tree = reads.read(rootId);
                    Document asRead = new Document("_id", rootId).append("version", tree.version())
                            .append("items", new Document(tree.items().entrySet().stream().limit(DESCRIBED_ITEMS)
                                    .collect(java.util.stream.Collectors.toMap(i -> VersionedTree.canonicalId(
                                            i.getKey()), Map.Entry::getValue, (a, b) -> a,
                                            java.util.LinkedHashMap::new))));
                    tree.meta().ifPresent(m -> asRead.append("meta", m));
                    return Optional.of(new OperationView(id, STAGED, entry, List.of(new OperationView
                            .Touched(fields.roots.getNamespace().getCollectionName(), rootId, asRead,
                            "the root as read() returns it (committed version; at most " + DESCRIBED_ITEMS
                                    + " items)"))));
                }
            }
        }
        return Optional.empty();
    }

    /** The most items of a root {@link #describe} shows. */
    private static final int DESCRIBED_ITEMS = 50;

    /** Settles every root with unsettled versions. */
    public long settle() {
        return settlement.settle();
    }

    /** Deletes the item versions of abandoned attempts. */
    public long cleanup() {
        return maintenance.cleanup();
    }

    /** Applies the retention policy to every root. */
    public long prune() {
        return maintenance.prune();
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
            fields.retry.run(fields.name, id, "create root", () -> fields.roots.insertOne(root));
            return true;
        } catch (MongoException e) {
            if (MongoErrors.isDuplicateKey(e)) {
                // it exists (made earlier, or by this call's own attempt whose acknowledgement was lost): make sure
                // it is as durable as the write concern asks before saying so
                fields.retry.run(fields.name, id, "confirm root", () -> WriteConcerns.confirm(fields.roots, id, fields
                        .name, "create root"));
                return false;
            }
            throw e;
        }
    }

    // ---------------------------------------------------------------- status

    /**
     * The most roots with a staged change set that {@link #interrupted} and {@link #describe} read (through the
     * {@code pendingCount} index): each is an operation in flight, so a poll stays bounded even after a crash left many.
     */
    static final int SCANNED_ROOTS = 10_000;

    /**
     * Change sets staged longer than {@code staleAfter} ago and neither committed nor abandoned, oldest first (among
     * the first {@link #SCANNED_ROOTS} roots with one staged).
     */
    @Override
    public List<InterruptedOperation> interrupted(Duration staleAfter, int limit) {
        Date cutoff = fields.clock.cutoff(staleAfter);
        List<InterruptedOperation> out = new ArrayList<>();
        for (Document root : fields.roots.find(gt(PENDING_COUNT, 0)).projection(Projections.include(PENDING,
                PENDING_AT)).limit(SCANNED_ROOTS)) {
            for (Object value : pending(root).values()) {
                Document entry = (Document) value;
                Date at = entry.getDate(AT);
                if (at != null && !at.after(cutoff)) {
                    out.add(new InterruptedOperation(entry.get(CS), STAGED, fields.clock.ageOf(at.toInstant()), "root "
                            + root.get("_id") + ", version " + number(entry, V)));
                }
            }
        }
        out.sort(java.util.Comparator.comparing(InterruptedOperation::age).reversed());
        return out.subList(0, Math.min(limit, out.size()));
    }

    /** Change sets per state over every root, and the age of the oldest staged one. */
    @Override
    public StrategyStatus status() {
        Document sums = fields.retry.execute(fields.name, null, "sum root counters", () -> fields.roots.aggregate(List
                .of(
                Aggregates.group(null, Accumulators.sum("c", "$" + VERSION), Accumulators.sum("a", "$" + ABANDONED),
                        Accumulators.sum("p", "$" + PENDING_COUNT)))).first());
        long committedCount = sums == null ? 0 : number(sums, "c");
        long abandonedCount = sums == null ? 0 : number(sums, "a");
        long stagedCount = sums == null ? 0 : number(sums, "p");
        Instant oldest = null;
        for (Document root : fields.roots.find(gt(PENDING_COUNT, 0)).projection(Projections.include(PENDING,
                PENDING_AT))) {
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
        return new StrategyStatus(fields.name, counts, stagedCount,
                stagedCount == 0 || oldest == null ? Optional.empty() : Optional.of(fields.clock.ageOf(oldest)));
    }

    /** This instance's counters. */
    @Override
    public VersionedStoreMetrics metrics() {
        return new VersionedStoreMetrics(fields.staged.sum(), fields.committed.sum(), fields.conflicts.sum(), fields
                .abandoned.sum(),
                fields.treeReads.sum(), fields.settledVersions.sum(), fields.cleanedDocuments.sum(), fields
                        .prunedDocuments.sum());
    }

    @Override
    public List<String> setupProblems() {
        return fields.requiredIndexes.problems();
    }
}
