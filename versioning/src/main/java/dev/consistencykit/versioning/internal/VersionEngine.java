package dev.consistencykit.versioning.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.gt;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.bson.Document;

import com.mongodb.MongoException;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Projections;

import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.MongoErrors;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.core.WriteConcerns;
import dev.consistencykit.versioning.VersionedStoreListener;
import dev.consistencykit.versioning.VersionedStoreConfig;
import dev.consistencykit.versioning.VersionedStoreMetrics;

/**
 * The versioned-store protocol (see the package documentation of {@code dev.consistencykit.versioning}): stage on the
 * root, write the item versions, commit by compare-and-set on the root; read the root, then the item versions it
 * commits; settle, clean up, prune and recover from any number of processes.
 */
public final class VersionEngine extends VersionMaintenance {

    /** The engine over {@code database} (already checked for an acknowledged write concern). */
    public VersionEngine(VersionedStoreConfig config, MongoDatabase database, ServerClock clock,
                         VersionedStoreListener listener) {
        super(config, database, clock, listener);
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
}
