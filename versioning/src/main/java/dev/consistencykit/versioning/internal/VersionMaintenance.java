package dev.consistencykit.versioning.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.lte;
import static dev.consistencykit.versioning.internal.VersionFields.AT;
import static dev.consistencykit.versioning.internal.VersionFields.ATT;
import static dev.consistencykit.versioning.internal.VersionFields.COMMITTED;
import static dev.consistencykit.versioning.internal.VersionFields.CS;
import static dev.consistencykit.versioning.internal.VersionFields.DELETED;
import static dev.consistencykit.versioning.internal.VersionFields.FLOOR;
import static dev.consistencykit.versioning.internal.VersionFields.LOG;
import static dev.consistencykit.versioning.internal.VersionFields.PENDING;
import static dev.consistencykit.versioning.internal.VersionFields.PENDING_AT;
import static dev.consistencykit.versioning.internal.VersionFields.PENDING_COUNT;
import static dev.consistencykit.versioning.internal.VersionFields.ROOT;
import static dev.consistencykit.versioning.internal.VersionFields.UNSETTLED;
import static dev.consistencykit.versioning.internal.VersionFields.UNTIL;
import static dev.consistencykit.versioning.internal.VersionFields.V;
import static dev.consistencykit.versioning.internal.VersionFields.VERSION;
import static dev.consistencykit.versioning.internal.VersionFields.number;
import static dev.consistencykit.versioning.internal.VersionFields.pending;
import static dev.consistencykit.versioning.internal.VersionFields.unsettled;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.bson.Document;
import org.bson.types.ObjectId;

import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.spi.Listeners;
import dev.consistencykit.core.spi.Passes;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.versioning.Retention;
import dev.consistencykit.versioning.VersionedStoreConfig;
import dev.consistencykit.versioning.internal.VersionWrites.Attempt;

/**
 * Maintenance: deciding stale change sets, settling, cleaning up abandoned attempts and pruning below retention.
 */
final class VersionMaintenance {

    private final VersionFields fields;
    private final VersionedStoreConfig config;
    private final VersionWrites writes;
    private final VersionSettlement settlement;

    /**
     * Recovery and maintenance, over the shared fields, the writes (a decided attempt is committed or abandoned) and
     * the settlement.
     */
    VersionMaintenance(VersionFields fields, VersionWrites writes, VersionSettlement settlement) {
        this.fields = fields;
        this.config = fields.config;
        this.writes = writes;
        this.settlement = settlement;
    }

    // ---------------------------------------------------------------- maintenance

    /**
     * Decides every change set staged longer than {@code staleAfter} (commit when the root is still at its base and
     * all its documents are written, else abandon), then settles, cleans up and prunes.
     */
    public RecoveryReport recover(Duration staleAfter) {
        return recover(staleAfter, null);
    }

    /**
     * {@link #recover(Duration)}; only the change set {@code only} when it is not {@code null} (checked), without the
     * settling, clean-up and pruning of a whole pass.
     */
    public RecoveryReport recover(Duration staleAfter, Object only) {
        long start = System.nanoTime();
        Date cutoff = fields.clock.cutoff(staleAfter);
        int examined = 0;
        int forward = 0;
        int back = 0;
        int skipped = 0;
        List<Document> withPending = fields.retry.execute(fields.name, null, "find staged change sets", () -> fields
                .roots
                .find(gt(PENDING_COUNT, 0)).projection(Projections.include(VERSION, PENDING, PENDING_AT))
                .into(new ArrayList<>()));
        for (Document root : withPending) {
            Object rootId = root.get("_id");
            for (Map.Entry<String, Object> e : pending(root).entrySet()) {
                Document entry = (Document) e.getValue();
                Date at = entry.getDate(AT);
                if ((at != null && at.after(cutoff)) || (only != null && !only.equals(entry.get(CS)))) {
                    continue;
                }
                examined++;
                Attempt a = Attempt.of(rootId, e.getKey(), entry);
                switch (Passes.orLeftToNextPass(fields.name, "recovery: change set " + Values.show(a.id()),
                        Decision.NONE, () -> decide(root, a))) {
                    case FORWARD -> forward++;
                    case BACK -> back++;
                    default -> skipped++;
                }
            }
        }
        if (only != null) {
            return new RecoveryReport(fields.name, examined, forward, back, skipped,
                    Duration.ofNanos(System.nanoTime() - start));
        }
        long settled = settlement.settle();
        long cleaned = cleanup();
        long pruned = prune();
        if (examined + settled + cleaned + pruned > 0) {
            LOG.info("[{}] recovery: {} stale change sets ({} committed, {} abandoned, {} left to others), {} versions"
                    + " settled, {} abandoned and {} pruned documents deleted", fields.name, examined, forward, back,
                    skipped,
                    settled, cleaned, pruned);
        }
        return new RecoveryReport(fields.name, examined, forward, back, skipped,
                Duration.ofNanos(System.nanoTime() - start));
    }

    enum Decision { FORWARD, BACK, NONE }

    Decision decide(Document root, Attempt a) {
        if (number(root, VERSION) == a.base()) {
            long written = fields.retry.execute(fields.name, a.id(), "count item versions", () -> fields.items
                    .countDocuments(
                    and(eq(ROOT, a.rootId()), eq(VERSION, a.version()), eq(ATT, a.att()))));
            if (written == a.size()) {
                if (writes.compareAndSetCommit(a)) {
                    fields.committed.increment();
                    LOG.info("[{}] recovery committed change set {} as version {} of root {}", fields.name, a.id(),
                            a.version(), a.rootId());
                    Listeners.call(fields.name, () -> fields.listener.onCommitted(a.rootId(), a.operationId(), a
                            .version(), true));
                    return Decision.FORWARD;
                }
                // the root moved (another attempt committed), or another recoverer decided this one
                return writes.abandon(a, "its base " + a.base() + " is no longer the root's version")
                        ? Decision.BACK : Decision.NONE;
            }
            return writes.abandon(a, "its writer went quiet after writing " + written + " of " + a.size()
                    + " item versions") ? Decision.BACK : Decision.NONE;
        }
        return writes.abandon(a, "its writer went quiet and the root moved past its base " + a.base())
                ? Decision.BACK : Decision.NONE;
    }

    /**
     * Deletes item versions that no root stages or commits: those of abandoned attempts, including any a paused
     * writer inserted after its attempt was abandoned. Reads the documents first and the roots second, and deletes
     * only unmarked documents, so an attempt staged, committed or settled meanwhile is never touched.
     */
    public long cleanup() {
        Map<Object, Set<List<Object>>> candidates = new LinkedHashMap<>();
        fields.retry.run(fields.name, null, "find uncommitted item versions", () -> {
            candidates.clear();
            for (Document d : fields.items.find(eq(COMMITTED, false)).projection(Projections.include(ROOT, VERSION,
                    ATT))) {
                candidates.computeIfAbsent(d.get(ROOT), k -> new HashSet<>())
                        .add(List.of(number(d, VERSION), d.getObjectId(ATT)));
            }
        });
        long deleted = 0;
        for (Map.Entry<Object, Set<List<Object>>> e : candidates.entrySet()) {
            Object rootId = e.getKey();
            Document root = fields.retry.execute(fields.name, rootId, "read root", () -> fields.roots.find(eq("_id",
                    rootId))
                    .projection(Projections.include(PENDING, UNSETTLED)).first());
            if (root == null) {
                LOG.warn("[{}] {} uncommitted item versions belong to root {}, which does not exist; left alone",
                        fields.name, e.getValue().size(), rootId);
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
                    rootDeleted += Passes.orLeftToNextPass(fields.name, "clean-up: the abandoned versions of root "
                            + Values.show(rootId), 0L,
                            () -> writes.deleteAttempt(rootId, (Long) key.get(0), (ObjectId) key.get(1)));
                }
            }
            if (rootDeleted > 0) {
                long count = rootDeleted;
                LOG.info("[{}] deleted {} abandoned item versions of root {}", fields.name, count, rootId);
                Listeners.call(fields.name, () -> fields.listener.onMaintained(rootId, 0, count, 0));
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
        List<Document> all = fields.retry.execute(fields.name, null, "list roots", () -> fields.roots
                .find(gte(VERSION, 0L))
                .projection(Projections.include(VERSION, FLOOR)).into(new ArrayList<>()));
        long deleted = 0;
        for (Document root : all) {
            Object rootId = root.get("_id");
            long target = targetFloor(rootId, number(root, VERSION), retention);
            if (target > number(root, FLOOR)) {
                deleted += Passes.orLeftToNextPass(fields.name, "prune: root " + Values.show(rootId), 0L,
                        () -> pruneRoot(rootId, target));
            }
        }
        return deleted;
    }

    long targetFloor(Object rootId, long version, Retention retention) {
        if (retention.keepLast().isPresent()) {
            return Math.max(0, version - retention.keepLast().get() + 1);
        }
        settlement.settleRoot(rootId);
        Date cutoff = fields.clock.cutoff(retention.newerThan().orElseThrow());
        Document oldestKept = fields.retry.execute(fields.name, rootId, "find oldest kept version", () -> fields.history
                .find(and(eq(ROOT, rootId), gte(AT, cutoff))).sort(Sorts.ascending(V)).limit(1).first());
        return oldestKept == null ? version : Math.min(version, number(oldestKept, V));
    }

    /**
     * Raises the root's floor to {@code floor}, then deletes the versions replaced at or below it, then the committed
     * tombstones at or below it, then their history records.
     */
    long pruneRoot(Object rootId, long floor) {
        settlement.settleRoot(rootId);
        fields.retry.run(fields.name, rootId, "raise floor", () -> fields.roots.updateOne(eq("_id", rootId), Updates
                .max(FLOOR, floor)));
        long deleted = fields.retry.execute(fields.name, rootId, "delete replaced item versions", () -> fields.items
                .deleteMany(
                and(eq(ROOT, rootId), lte(VERSION, floor), lte(UNTIL, floor))).getDeletedCount());
        deleted += fields.retry.execute(fields.name, rootId, "delete old tombstones", () -> fields.items.deleteMany(
                and(eq(ROOT, rootId), lte(VERSION, floor), eq(DELETED, true), eq(COMMITTED, true)))
                .getDeletedCount());
        fields.retry.run(fields.name, rootId, "delete old version records",
                () -> fields.history.deleteMany(and(eq(ROOT, rootId), lt(V, floor))));
        fields.prunedDocuments.add(deleted);
        long count = deleted;
        LOG.info("[{}] pruned root {} below version {}: {} item versions deleted", fields.name, rootId, floor, count);
        Listeners.call(fields.name, () -> fields.listener.onMaintained(rootId, 0, 0, count));
        return deleted;
    }
}
