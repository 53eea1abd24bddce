package dev.consistencykit.versioning.internal;

import static dev.consistencykit.versioning.internal.VersionSchema.ABANDONED_STATE;
import static dev.consistencykit.versioning.internal.VersionSchema.AT;
import static dev.consistencykit.versioning.internal.VersionSchema.COMMITTED_STATE;
import static dev.consistencykit.versioning.internal.VersionSchema.CS;
import static dev.consistencykit.versioning.internal.VersionSchema.STAGED;
import static dev.consistencykit.versioning.internal.VersionSchema.V;
import static dev.consistencykit.versioning.internal.VersionSchema.number;
import static dev.consistencykit.versioning.internal.VersionSchema.pending;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.bson.Document;

import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.OperationView;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.core.spi.PatternInspection;
import dev.consistencykit.versioning.VersionedStoreMetrics;
import dev.consistencykit.versioning.VersionedTree;

/**
 * The operator's reads: a staged change set described with its root as a reader reads it, the change sets staged too
 * long, the counts by state, and the counters.
 */
public final class VersionAudit implements PatternInspection<VersionedStoreMetrics> {

    private final String name;
    private final VersionStore store;
    private final VersionReads reads;
    private final VersionCounters counters;
    private final ServerClock clock;

    VersionAudit(String name, VersionStore store, VersionReads reads, VersionCounters counters, ServerClock clock) {
        this.name = name;
        this.store = store;
        this.reads = reads;
        this.counters = counters;
        this.clock = clock;
    }

    /**
     * The change set {@code id} while it is staged (its entry on its root), and its root as a reader reads it now
     * ({@link VersionReads#read}: the committed version, without the staged change). Empty once it is committed or abandoned: the
     * history is indexed by root, not by change set alone.
     */
    @Override
    public Optional<OperationView> describe(Object id) {
        for (Document root : store.rootsWithPending(SCANNED_ROOTS)) {
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
                            .Touched(store.rootsName(), rootId, asRead,
                            "the root as read() returns it (committed version; at most " + DESCRIBED_ITEMS
                                    + " items)"))));
                }
            }
        }
        return Optional.empty();
    }

    /** The most items of a root {@link #describe} shows. */
    private static final int DESCRIBED_ITEMS = 50;

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
        Date cutoff = clock.cutoff(staleAfter);
        List<InterruptedOperation> out = new ArrayList<>();
        for (Document root : store.rootsWithPending(SCANNED_ROOTS)) {
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
    @Override
    public StrategyStatus status() {
        Document sums = store.sumRootCounters();
        long committedCount = sums == null ? 0 : number(sums, "c");
        long abandonedCount = sums == null ? 0 : number(sums, "a");
        long stagedCount = sums == null ? 0 : number(sums, "p");
        Instant oldest = null;
        for (Document root : store.rootsWithPending(0)) {
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
    @Override
    public VersionedStoreMetrics metrics() {
        return counters.read();
    }
}
