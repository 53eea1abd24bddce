package dev.consistencykit.versioning.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.lte;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.bson.Document;
import org.bson.types.ObjectId;

import com.google.common.collect.Lists;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.ErrorCategory;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;

import dev.consistencykit.core.Listeners;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.versioning.Retention;
import dev.consistencykit.versioning.VersionedStoreListener;
import dev.consistencykit.versioning.VersionedStoreConfig;

/**
 * Maintenance: deciding stale change sets, settling, cleaning up abandoned attempts and pruning below retention.
 */
public abstract class VersionMaintenance extends VersionReads {

    VersionMaintenance(VersionedStoreConfig config, MongoDatabase database, ServerClock clock,
                         VersionedStoreListener listener) {
        super(config, database, clock, listener);
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

    enum Decision { FORWARD, BACK, NONE }

    Decision decide(Document root, Attempt a) {
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
    @Override
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

    long settleBatch(Object rootId, List<Long> versions, Map<Long, Document> entries,
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

    long targetFloor(Object rootId, long version, Retention retention) {
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
    long pruneRoot(Object rootId, long floor) {
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
}
