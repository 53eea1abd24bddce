package dev.consistencykit.versioning;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.bson.Document;
import org.bson.types.ObjectId;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.RetryPolicy;

/** A product catalogue tree: the fixture of this module's tests, with its invariants read back from the server. */
final class Catalogue {

    static final String ROOT = "catalogue";
    static final RetryPolicy FAST_RETRY = RetryPolicy.DEFAULT.withBackoff(Duration.ofMillis(1), Duration.ofMillis(4));

    private Catalogue() {
    }

    static VersionedStore.Builder store(MongoDatabase db) {
        return VersionedStore.builder(db).retryPolicy(FAST_RETRY);
    }

    static Document product(String title, long price) {
        return new Document("title", title).append("price", price);
    }

    /** Items i0…i(n-1) priced 100, 200… */
    static Map<Object, Document> products(int n) {
        Map<Object, Document> items = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            items.put("i" + i, product("Item " + i, 100L * (i + 1)));
        }
        return items;
    }

    /** Indexes, the root, and {@code items} committed as version 1 (with its checksum as meta). */
    static Map<Object, Document> seed(MongoDatabase db, Map<Object, Document> items) {
        VersionedStore store = store(db).build();
        store.ensureIndexes();
        store.createRoot(ROOT);
        ChangeSet.Builder change = ChangeSet.on(ROOT, 0).id(OperationId.of("seed"));
        items.forEach(change::put);
        store.commit(change.meta(checksum(items)).build());
        return items;
    }

    static Document checksum(Map<Object, Document> state) {
        return new Document("checksum", VersionedTree.checksumOf(state));
    }

    /** {@code base} with the puts and deletes of {@code change} applied. */
    static Map<Object, Document> applied(Map<Object, Document> base, ChangeSet change) {
        Map<Object, Document> out = new LinkedHashMap<>(base);
        change.changes().forEach((id, value) -> {
            if (value.isPresent()) {
                out.put(id, (Document) value.get());
            } else {
                out.remove(id);
            }
        });
        return out;
    }

    /** A change set made from {@code base} at {@code version}, carrying the checksum of the state it makes. */
    static ChangeSet withChecksum(Map<Object, Document> base, ChangeSet.Builder builder) {
        ChangeSet draft = builder.build();
        return new ChangeSet(draft.id(), draft.rootId(), draft.baseVersion(), draft.changes(),
                Optional.of(checksum(applied(base, draft))));
    }

    /**
     * Nothing staged, no document left that no version commits or stages, every version from the floor up whole (its
     * checksum matches), the current tree one of {@code allowed} (any when null), and its documents complete.
     */
    static List<String> invariants(MongoDatabase db, Set<Map<Object, Document>> allowed) {
        List<String> problems = new ArrayList<>();
        VersionedStore store = store(db).build();
        if (store.status().inFlight() != 0) {
            problems.add(store.status().inFlight() + " change sets still staged");
        }
        Document root = db.getCollection(VersionedStoreConfig.DEFAULT_ROOTS_COLLECTION)
                .find(Filters.eq("_id", ROOT)).first();
        if (root == null) {
            problems.add("root missing");
            return problems;
        }
        Set<List<Object>> live = new java.util.HashSet<>();
        for (String field : List.of("pending", "unsettled")) {
            root.get(field, Document.class).values().forEach(v -> live.add(List.of(
                    ((Number) ((Document) v).get("v")).longValue(), ((Document) v).getObjectId("att"))));
        }
        long dead = 0;
        for (Document d : db.getCollection(VersionedStoreConfig.DEFAULT_ITEMS_COLLECTION)
                .find(Filters.eq("committed", false))) {
            if (!live.contains(List.of(((Number) d.get("version")).longValue(), d.getObjectId("att")))) {
                dead++;
            }
        }
        if (dead != 0) {
            problems.add(dead + " item versions left that no version commits or stages");
        }
        Map<Long, Integer> records = new java.util.TreeMap<>();
        for (Document record : db.getCollection(VersionedStoreConfig.DEFAULT_HISTORY_COLLECTION)
                .find(Filters.eq("root", ROOT))) {
            records.merge(((Number) record.get("v")).longValue(), 1, Integer::sum);
        }
        long floor = ((Number) root.get("floor")).longValue();
        records.forEach((v, n) -> {
            if (n != 1) {
                problems.add(n + " records of version " + v);
            }
            if (v < floor) {
                problems.add("a record of version " + v + ", below the floor " + floor);
            }
        });
        // what pruning deletes stays deleted: item versions replaced at or below the floor, tombstones there
        long kept = db.getCollection(VersionedStoreConfig.DEFAULT_ITEMS_COLLECTION).countDocuments(Filters.or(
                Filters.and(Filters.eq("root", ROOT), Filters.lte("version", floor), Filters.lte("until", floor)),
                Filters.and(Filters.eq("root", ROOT), Filters.lte("version", floor), Filters.eq("deleted", true),
                        Filters.eq("committed", true))));
        if (kept != 0) {
            problems.add(kept + " item versions pruning deletes kept below the floor " + floor);
        }
        problems.addAll(readProblems(store, allowed));
        long current = ((Number) root.get("version")).longValue();
        problems.addAll(carriedProblems(db, store, floor, current));
        for (long v = Math.max(1, floor); v <= current; v++) {
            VersionedTree tree = store.readAsOf(ROOT, v);
            Optional<String> expected = tree.meta().map(m -> m.getString("checksum"));
            if (expected.isPresent() && !expected.get().equals(tree.checksum())) {
                problems.add("version " + v + " reads " + tree.items() + ", not what was committed");
            }
        }
        for (VersionInfo info : store.versions(ROOT)) {
            if (info.version() != current) {
                continue;
            }
            Document entry = root.get("unsettled", Document.class).values().stream().map(Document.class::cast)
                    .filter(e -> ((Number) e.get("v")).longValue() == current).findFirst().orElse(null);
            if (entry == null) {
                entry = db.getCollection(VersionedStoreConfig.DEFAULT_HISTORY_COLLECTION)
                        .find(Filters.and(Filters.eq("root", ROOT), Filters.eq("v", current))).first();
            }
            ObjectId att = entry == null ? null : entry.getObjectId("att");
            long written = db.getCollection(VersionedStoreConfig.DEFAULT_ITEMS_COLLECTION).countDocuments(
                    Filters.and(Filters.eq("root", ROOT), Filters.eq("version", current), Filters.eq("att", att)));
            if (written != info.items()) {
                problems.add("the root points at version " + current + " with " + written + " of its "
                        + info.items() + " documents");
            }
        }
        return problems;
    }

    /**
     * What the root carries (its tree, the version before it) reads as the item versions do: the current tree, each
     * version from the floor up, and one item, read by {@code store} and by a store that reads item versions alone.
     */
    static List<String> carriedProblems(MongoDatabase db, VersionedStore store, long floor, long current) {
        List<String> problems = new ArrayList<>();
        VersionedStore aggregated = store(db).inlineTreeBytes(0).build();
        List<VersionedTree[]> pairs = new ArrayList<>();
        pairs.add(new VersionedTree[] {store.read(ROOT), aggregated.read(ROOT)});
        for (long v = floor; v <= current; v++) {
            pairs.add(new VersionedTree[] {store.readAsOf(ROOT, v), aggregated.readAsOf(ROOT, v)});
        }
        for (VersionedTree[] pair : pairs) {
            if (pair[0].version() != pair[1].version() || !pair[0].items().equals(pair[1].items())
                    || !pair[0].meta().equals(pair[1].meta())
                    || !pair[0].committedAt().equals(pair[1].committedAt())) {
                problems.add("version " + pair[1].version() + " reads " + pair[0] + " from the root but " + pair[1]
                        + " from its item versions");
            }
        }
        VersionedTree tree = aggregated.read(ROOT);
        for (Object item : tree.items().keySet()) {
            if (!store.get(ROOT, item).equals(tree.item(item))) {
                problems.add("item " + item + " reads " + store.get(ROOT, item) + ", not " + tree.item(item));
            }
        }
        return problems;
    }

    /**
     * A whole-tree read must be exactly one of {@code allowed} (any state when null), and match the checksum stored
     * with its version.
     */
    static List<String> readProblems(VersionedStore store, Set<Map<Object, Document>> allowed) {
        List<String> problems = new ArrayList<>();
        VersionedTree tree = store.read(ROOT);
        if (allowed != null && !allowed.contains(tree.items())) {
            problems.add("read version " + tree.version() + " as " + tree.items() + ", which is no committed state");
        }
        tree.meta().map(m -> m.getString("checksum")).filter(c -> !c.equals(tree.checksum()))
                .ifPresent(c -> problems.add("read version " + tree.version() + " fractured: checksum "
                        + tree.checksum() + " but " + c + " was committed"));
        return problems;
    }
}
