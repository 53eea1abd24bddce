package dev.consistencykit.versioning.internal;

import dev.consistencykit.versioning.VersionedStoreListener;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lt;
import static dev.consistencykit.versioning.internal.VersionSchema.AT;
import static dev.consistencykit.versioning.internal.VersionSchema.ATT;
import static dev.consistencykit.versioning.internal.VersionSchema.COMMITTED;
import static dev.consistencykit.versioning.internal.VersionSchema.COMMITTED_AT;
import static dev.consistencykit.versioning.internal.VersionSchema.CS;
import static dev.consistencykit.versioning.internal.VersionSchema.FP;
import static dev.consistencykit.versioning.internal.VersionSchema.ITEM;
import static dev.consistencykit.versioning.internal.VersionSchema.META;
import static dev.consistencykit.versioning.internal.VersionSchema.N;
import static dev.consistencykit.versioning.internal.VersionSchema.ROOT;
import static dev.consistencykit.versioning.internal.VersionSchema.UNSETTLED;
import static dev.consistencykit.versioning.internal.VersionSchema.UNSETTLED_AT;
import static dev.consistencykit.versioning.internal.VersionSchema.UNSETTLED_COUNT;
import static dev.consistencykit.versioning.internal.VersionSchema.UNTIL;
import static dev.consistencykit.versioning.internal.VersionSchema.V;
import static dev.consistencykit.versioning.internal.VersionSchema.VERSION;
import static dev.consistencykit.versioning.internal.VersionSchema.number;
import static dev.consistencykit.versioning.internal.VersionSchema.unsettled;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.bson.Document;

import com.google.common.collect.Lists;

import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;

import dev.consistencykit.core.spi.Listeners;
import dev.consistencykit.core.spi.Passes;
import dev.consistencykit.core.spi.Values;

/**
 * Settlement: moves committed versions out of the root into the history collection, marking their documents
 * committed first. Staging calls it on a root that reached its threshold, maintenance on every root.
 */
public final class VersionSettlement {

    private static final int SETTLE_BATCH = 256;

    private final String name;
    private final VersionStore store;
    private final VersionCounters counters;
    private final VersionedStoreListener listener;

    /** Settles through the store. */
    VersionSettlement(String name, VersionStore store, VersionCounters counters, VersionedStoreListener listener) {
        this.name = name;
        this.store = store;
        this.counters = counters;
        this.listener = listener;
    }

    /**
     * Settles every root with unsettled versions: those with documents not yet marked committed (found by cleanup's
     * index, so the roots need no index of their own for it). Returns the versions settled.
     */
    public long settle() {
        Set<Object> candidates = new LinkedHashSet<>();
        for (Document d : store.uncommittedItems("find unsettled roots", ROOT)) {
            candidates.add(d.get(ROOT));
        }
        long total = 0;
        for (Object rootId : candidates) {
            total += Passes.orLeftToNextPass(name, "settlement: root " + Values.show(rootId), 0L,
                    () -> settleRoot(rootId));
        }
        return total;
    }

    /**
     * Marks the documents of the root's unsettled versions committed, stamps the documents they replaced with
     * {@code until}, records each version in the history collection, and only then removes it from the root.
     */
    public long settleRoot(Object rootId) {
        Document root = store.root(rootId, "read unsettled versions", UNSETTLED, UNSETTLED_AT, VERSION, COMMITTED_AT);
        if (root == null) {
            return 0;
        }
        removeTimesWithoutEntries(rootId, root);
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
            counters.settledVersions.add(settled);
            long count = settled;
            Listeners.call(name, () -> listener.onMaintained(rootId, (int) count, 0, 0));
        }
        return settled;
    }

    /**
     * Removes the commit times the root holds for no unsettled entry: a commit copies its base's time to the base's
     * entry ({@link VersionWrites#baseTime}), and the copy can land after settlement removed that entry.
     */
    void removeTimesWithoutEntries(Object rootId, Document root) {
        Document times = root.get(UNSETTLED_AT, Document.class);
        Document entries = root.get(UNSETTLED, Document.class);
        if (times == null) {
            return;
        }
        List<WriteModel<Document>> removals = new ArrayList<>();
        for (String slot : times.keySet()) {
            if ((entries == null || !entries.containsKey(slot)) && VersionSchema.isSlot(slot)) {
                removals.add(new UpdateOneModel<>(and(eq("_id", rootId), exists(UNSETTLED + "." + slot, false)),
                        Updates.unset(UNSETTLED_AT + "." + slot)));
            }
        }
        if (!removals.isEmpty()) {
            store.trimRoot(rootId, removals);
        }
    }

    long settleBatch(Object rootId, List<Long> versions, Map<Long, Document> entries,
                             Map<Long, String> slots) {
        List<WriteModel<Document>> marks = new ArrayList<>();
        for (long v : versions) {
            marks.add(new UpdateManyModel<>(and(eq(ROOT, rootId), eq(VERSION, v), eq(ATT, entries.get(v).get(ATT))),
                    Updates.set(COMMITTED, true)));
        }
        List<Document> written = store.itemsOfVersions(rootId, versions);
        for (Document d : written) {
            long v = number(d, VERSION);
            if (entries.get(v).getObjectId(ATT).equals(d.getObjectId(ATT))) {
                marks.add(new UpdateManyModel<>(and(eq(ROOT, rootId), eq(ITEM, d.get(ITEM)), lt(VERSION, v),
                        gt(UNTIL, v)), Updates.min(UNTIL, v)));
            }
        }
        store.markSettled(rootId, marks);
        List<WriteModel<Document>> records = new ArrayList<>();
        for (long v : versions) {
            Document entry = entries.get(v);
            // the root beside the _id (which holds it too): an upsert on a collection sharded on the root must name
            // its shard key, and the insert takes the root from this equality
            records.add(new UpdateOneModel<>(and(eq("_id", VersionSchema.historyRecordId(rootId, v)),
                    eq(ROOT, rootId)), Updates.combine(Updates.setOnInsert(V, v),
                    Updates.setOnInsert(CS, entry.get(CS)), Updates.setOnInsert(ATT, entry.get(ATT)),
                    Updates.setOnInsert(N, entry.get(N)), Updates.setOnInsert(FP, entry.get(FP)),
                    Updates.setOnInsert(META, entry.get(META)), Updates.setOnInsert(AT, entry.get(AT))),
                    new UpdateOptions().upsert(true)));
        }
        store.recordVersions(rootId, records);
        List<WriteModel<Document>> trims = new ArrayList<>();
        for (long v : versions) {
            trims.add(new UpdateOneModel<>(and(eq("_id", rootId),
                    eq(UNSETTLED + "." + slots.get(v) + "." + ATT, entries.get(v).get(ATT))),
                    Updates.combine(Updates.unset(UNSETTLED + "." + slots.get(v)),
                            Updates.unset(UNSETTLED_AT + "." + slots.get(v)), Updates.inc(UNSETTLED_COUNT, -1))));
        }
        long trimmed = store.trimRoot(rootId, trims);
        if (trimmed < versions.size()) {
            // another settler removed some of these versions from the root first, and may have pruned them since:
            // the records just written may lie below the floor, for the next prune pass to delete
            store.pruneAgain(rootId);
        }
        return trimmed;
    }
}
