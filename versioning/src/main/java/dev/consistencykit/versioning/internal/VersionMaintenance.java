package dev.consistencykit.versioning.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.versioning.VersionedStoreListener;

import static com.mongodb.client.model.Filters.and;
import static dev.consistencykit.versioning.internal.VersionSchema.AT;
import static dev.consistencykit.versioning.internal.VersionSchema.ATT;
import static dev.consistencykit.versioning.internal.VersionSchema.CS;
import static dev.consistencykit.versioning.internal.VersionSchema.DIRECT;
import static dev.consistencykit.versioning.internal.VersionSchema.FENCE;
import static dev.consistencykit.versioning.internal.VersionSchema.FLOOR;
import static dev.consistencykit.versioning.internal.VersionSchema.LATE;
import static dev.consistencykit.versioning.internal.VersionSchema.PENDING;
import static dev.consistencykit.versioning.internal.VersionSchema.PRUNED;
import static dev.consistencykit.versioning.internal.VersionSchema.ROOT;
import static dev.consistencykit.versioning.internal.VersionSchema.UNSETTLED;
import static dev.consistencykit.versioning.internal.VersionSchema.V;
import static dev.consistencykit.versioning.internal.VersionSchema.VERSION;
import static dev.consistencykit.versioning.internal.VersionSchema.number;
import static dev.consistencykit.versioning.internal.VersionSchema.pending;
import static dev.consistencykit.versioning.internal.VersionSchema.unsettled;

import java.time.Duration;
import java.util.Date;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.bson.Document;
import org.bson.types.ObjectId;

import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.spi.Listeners;
import dev.consistencykit.core.spi.Passes;
import dev.consistencykit.core.spi.PatternRecovery;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.versioning.Retention;
import dev.consistencykit.versioning.VersionedStoreConfig;
import dev.consistencykit.versioning.internal.VersionWrites.Attempt;

/**
 * Maintenance: deciding stale change sets, settling, cleaning up abandoned attempts and pruning below retention.
 */
public final class VersionMaintenance implements PatternRecovery {

    private static final Logger LOG = LoggerFactory.getLogger(VersionMaintenance.class);

    private final VersionedStoreConfig config;
    private final String name;
    private final VersionStore store;
    private final VersionWrites writes;
    private final VersionSettlement settlement;
    private final VersionCounters counters;
    private final ServerClock clock;
    private final VersionedStoreListener listener;

    /**
     * Recovery and maintenance, through the store, with the writes (a decided attempt is committed or abandoned) and
     * the settlement.
     */
    VersionMaintenance(VersionedStoreConfig config, VersionStore store, VersionWrites writes,
                       VersionSettlement settlement, VersionCounters counters, ServerClock clock,
                       VersionedStoreListener listener) {
        this.config = config;
        this.name = config.name();
        this.store = store;
        this.writes = writes;
        this.settlement = settlement;
        this.counters = counters;
        this.clock = clock;
        this.listener = listener;
    }

    // ---------------------------------------------------------------- maintenance

    /**
     * Decides every change set staged longer than {@code staleAfter} (commit when the root is still at its base and
     * all its documents are written, else abandon), then settles, cleans up and prunes.
     */
    @Override
    public RecoveryReport recover(Duration staleAfter) {
        return recover(staleAfter, null);
    }

    /** {@link #recover(Duration)} of the change set {@code id} alone. */
    @Override
    public RecoveryReport recoverOne(Object id, Duration staleAfter) {
        return recover(staleAfter, id);
    }

    /**
     * {@link #recover(Duration)}; only the change set {@code only} when it is not {@code null} (checked), without the
     * settling, clean-up and pruning of a whole pass.
     */
    public RecoveryReport recover(Duration staleAfter, Object only) {
        long start = System.nanoTime();
        Date cutoff = clock.cutoff(staleAfter);
        int examined = 0;
        int forward = 0;
        int back = 0;
        int skipped = 0;
        List<Document> withPending = store.stagedRoots();
        for (Document root : withPending) {
            Object rootId = root.get("_id");
            for (Map.Entry<String, Object> e : pending(root).entrySet()) {
                Document entry = (Document) e.getValue();
                Date at = entry.getDate(AT);
                if ((at != null && at.after(cutoff)) || (only != null && !only.equals(entry.get(CS)))) {
                    continue;
                }
                examined++;
                Attempt a = Attempt.of(rootId, e.getKey(), entry, root);
                switch (Passes.orLeftToNextPass(name, "recovery: change set " + Values.show(a.id()),
                        Decision.NONE, () -> decide(root, a))) {
                    case FORWARD -> forward++;
                    case BACK -> back++;
                    default -> skipped++;
                }
            }
        }
        if (only != null) {
            return new RecoveryReport(name, examined, forward, back, skipped,
                    Duration.ofNanos(System.nanoTime() - start));
        }
        long settled = settlement.settle();
        long cleaned = cleanup(staleAfter);
        long pruned = prune();
        if (examined + settled + cleaned + pruned > 0) {
            LOG.info("[{}] recovery: {} stale change sets ({} committed, {} abandoned, {} left to others), {} versions"
                    + " settled, {} abandoned and {} pruned documents deleted", name, examined, forward, back,
                    skipped,
                    settled, cleaned, pruned);
        }
        return new RecoveryReport(name, examined, forward, back, skipped,
                Duration.ofNanos(System.nanoTime() - start));
    }

    enum Decision { FORWARD, BACK, NONE }

    Decision decide(Document root, Attempt a) {
        if (number(root, VERSION) == a.base()) {
            long written = store.countAttemptItems(a.id(), a.rootId(), a.version(), a.att());
            if (written == a.size()) {
                if (writes.compareAndSetCommit(a)) {
                    counters.committed.increment();
                    LOG.info("[{}] recovery committed change set {} as version {} of root {}", name, a.id(),
                            a.version(), a.rootId());
                    Listeners.call(name, () -> listener.onCommitted(a.rootId(), a.operationId(), a
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

    /** {@link #cleanup(Duration)} of the direct commits quiet for the instance's {@code staleAfter}. */
    public long cleanup() {
        return cleanup(config.staleAfter());
    }

    /**
     * Deletes item versions that no root stages or commits: those of abandoned attempts, including any a paused
     * writer inserted after its attempt was abandoned, and those of direct commits that can no longer commit — the
     * root moved past their base, or their writer went quiet for {@code staleAfter} with the root still at its base
     * and clean-up moved the root's fence on first. Reads the documents first and the roots second, and deletes only
     * unmarked documents, so an attempt staged, committed or settled meanwhile is never touched.
     */
    public long cleanup(Duration staleAfter) {
        Map<Object, Set<List<Object>>> candidates = new LinkedHashMap<>();
        Set<List<Object>> direct = new HashSet<>();
        for (Document d : store.uncommittedItems("find uncommitted item versions", ROOT, VERSION, ATT, DIRECT)) {
            if (!(d.get(ATT) instanceof ObjectId att) || !(d.get(VERSION) instanceof Number version)) {
                // not an attempt's item version: written by something else, never this clean-up's to delete
                LOG.warn("[{}] item version {} holds no attempt's version and id; left alone", name,
                        Values.show(d.get("_id")));
                continue;
            }
            List<Object> key = List.of(version.longValue(), att);
            candidates.computeIfAbsent(d.get(ROOT), k -> new HashSet<>()).add(key);
            if (Boolean.TRUE.equals(d.get(DIRECT))) {
                direct.add(key);
            }
        }
        Date cutoff = clock.cutoff(staleAfter);
        long deleted = 0;
        for (Map.Entry<Object, Set<List<Object>>> e : candidates.entrySet()) {
            Object rootId = e.getKey();
            Document root = store.root(rootId, "read root", VERSION, FENCE, PENDING, UNSETTLED);
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
            long version = number(root, VERSION);
            boolean fenced = false;
            long rootDeleted = 0;
            for (List<Object> key : e.getValue()) {
                if (live.contains(key)) {
                    continue;
                }
                if (direct.contains(key) && (Long) key.get(0) > version) {
                    // a direct commit whose base is still the root's version: its writer may still compare-and-set,
                    // unless the fence moved since it read the root
                    if (!((ObjectId) key.get(1)).getDate().before(cutoff)) {
                        continue;
                    }
                    if (!fenced) {
                        fenced = Passes.orLeftToNextPass(name, "clean-up: fencing root " + Values.show(rootId),
                                false, () -> store.moveFence(rootId, number(root, FENCE), version));
                        if (!fenced) {
                            continue;
                        }
                    }
                }
                rootDeleted += Passes.orLeftToNextPass(name, "clean-up: the abandoned versions of root "
                        + Values.show(rootId), 0L,
                        () -> writes.deleteAttempt(rootId, (Long) key.get(0), (ObjectId) key.get(1)));
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
        List<Document> all = store.rootVersions();
        long deleted = 0;
        for (Document root : all) {
            Object rootId = root.get("_id");
            long floor = number(root, FLOOR);
            long target = Math.max(floor, targetFloor(rootId, number(root, VERSION), retention));
            // below the floor, something may be left: a pruner died after raising it, or a settler wrote records there
            if (target > floor || number(root, PRUNED) < floor) {
                long late = number(root, LATE);
                deleted += Passes.orLeftToNextPass(name, "prune: root " + Values.show(rootId), 0L,
                        () -> pruneRoot(rootId, target, late));
            }
        }
        return deleted;
    }

    long targetFloor(Object rootId, long version, Retention retention) {
        if (retention.keepLast().isPresent()) {
            return Math.max(0, version - retention.keepLast().get() + 1);
        }
        settlement.settleRoot(rootId);
        Date cutoff = clock.cutoff(retention.newerThan().orElseThrow());
        Document oldestKept = store.oldestRecordSince(rootId, cutoff);
        return oldestKept == null ? version : Math.min(version, number(oldestKept, V));
    }

    /**
     * Raises the root's floor to {@code floor}, then deletes the versions replaced at or below it, then the committed
     * tombstones at or below it, then their history records, then marks the root pruned to it unless a settler counted
     * late records on it since it read {@code late} ({@link VersionSchema#LATE}).
     */
    long pruneRoot(Object rootId, long floor, long late) {
        settlement.settleRoot(rootId);
        store.raiseFloor(rootId, floor);
        long deleted = store.deleteBelowFloor(rootId, floor);
        store.deleteRecordsBelow(rootId, floor);
        store.markPruned(rootId, floor, late);
        counters.prunedDocuments.add(deleted);
        long count = deleted;
        LOG.info("[{}] pruned root {} below version {}: {} item versions deleted", name, rootId, floor, count);
        Listeners.call(name, () -> listener.onMaintained(rootId, 0, 0, count));
        return deleted;
    }
}
