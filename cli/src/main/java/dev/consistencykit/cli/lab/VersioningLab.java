package dev.consistencykit.cli.lab;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

import org.bson.Document;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.ChaosRunner;
import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.InterleavingExplorer;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.RoundTripCounter;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.Retention;
import dev.consistencykit.versioning.VersionedStore;
import dev.consistencykit.versioning.VersionedStoreConfig;
import dev.consistencykit.versioning.VersionedTree;

/** Chaos and benchmark of versioned documents on a product catalogue tree. */
public final class VersioningLab implements PatternLab {

    private static final String ROOT = "catalogue";

    @Override
    public String pattern() {
        return "versioning";
    }

    private static VersionedStore.Builder store(MongoDatabase db) {
        return VersionedStore.builder(db).retryPolicy(FAST_RETRY);
    }

    private static Document product(String title, long price) {
        return new Document("title", title).append("price", price);
    }

    /** The catalogue's items {@code i0…} committed as version 1, with the checksum of the state in its meta. */
    private static Map<Object, Document> seed(MongoDatabase db, int items) {
        VersionedStore store = store(db).build();
        store.ensureIndexes();
        store.createRoot(ROOT);
        Map<Object, Document> state = new LinkedHashMap<>();
        ChangeSet.Builder change = ChangeSet.on(ROOT, 0).id(OperationId.of("seed"));
        for (int i = 0; i < items; i++) {
            state.put("i" + i, product("Item " + i, 100L * (i + 1)));
            change.put("i" + i, state.get("i" + i));
        }
        store.commit(change.meta(checksum(state)).build());
        return state;
    }

    private static Document checksum(Map<Object, Document> state) {
        return new Document("checksum", VersionedTree.checksumOf(state));
    }

    /** A tree read whole: one of {@code allowed} (any when null), and equal to the checksum committed with it. */
    private static List<String> readProblems(VersionedTree tree, Set<Map<Object, Document>> allowed) {
        List<String> problems = new ArrayList<>();
        if (allowed != null && !allowed.contains(tree.items())) {
            problems.add("read version " + tree.version() + " as " + tree.items() + ": no committed state");
        }
        tree.meta().map(m -> m.getString("checksum")).filter(c -> !c.equals(tree.checksum()))
                .ifPresent(c -> problems.add("version " + tree.version() + " read fractured: " + tree.items()));
        return problems;
    }

    /**
     * Nothing staged; no document that no version commits or stages; every kept version reads whole; the current one
     * is one of {@code allowed} (any when null).
     */
    public static List<String> invariants(MongoDatabase db, Set<Map<Object, Document>> allowed) {
        VersionedStore store = store(db).build();
        List<String> problems = new ArrayList<>();
        if (store.status().inFlight() != 0) {
            problems.add(store.status().inFlight() + " change sets still staged");
        }
        Document root = db.getCollection(VersionedStoreConfig.DEFAULT_ROOTS_COLLECTION)
                .find(Filters.eq("_id", ROOT)).first();
        Set<List<Object>> live = new HashSet<>();
        for (String field : List.of("pending", "unsettled")) {
            root.get(field, Document.class).values().forEach(v -> live.add(List.of(
                    ((Number) ((Document) v).get("v")).longValue(), ((Document) v).get("att"))));
        }
        long dead = 0;
        for (Document d : db.getCollection(VersionedStoreConfig.DEFAULT_ITEMS_COLLECTION)
                .find(Filters.eq("committed", false))) {
            dead += live.contains(List.of(((Number) d.get("version")).longValue(), d.get("att"))) ? 0 : 1;
        }
        if (dead != 0) {
            problems.add(dead + " item versions left that no version commits or stages");
        }
        VersionedTree current = store.read(ROOT);
        problems.addAll(readProblems(current, allowed));
        for (long v = Math.max(1, ((Number) root.get("floor")).longValue()); v < current.version(); v++) {
            problems.addAll(readProblems(store.readAsOf(ROOT, v), null));
        }
        return problems;
    }

    @Override
    public ChaosReport chaos(MongoTarget target, int seeds, Consumer<String> progress) {
        MongoClient client = target.client();
        List<String> details = new ArrayList<>();
        Map<Object, Document> before = new LinkedHashMap<>();
        for (int i = 0; i < 5; i++) {
            before.put("i" + i, product("Item " + i, 100L * (i + 1)));
        }
        ChangeSet draft = ChangeSet.on(ROOT, 1).id(OperationId.of("five-items"))
                .put("i0", product("Renamed 0", 1)).put("i1", product("Renamed 1", 2)).put("i7", product("New", 3))
                .delete("i3").delete("i4").build();
        Map<Object, Document> after = new LinkedHashMap<>(before);
        draft.changes().forEach((id, value) -> value.ifPresentOrElse(v -> after.put(id, (Document) v), () -> after.remove(id)));
        ChangeSet change = new ChangeSet(draft.id(), draft.rootId(), draft.baseVersion(), draft.changes(),
                Optional.of(checksum(after)));
        Set<Map<Object, Document>> allowed = Set.of(before, after);
        Map<String, List<String>> seenBeforeRecovery = new ConcurrentHashMap<>();
        CrashPointExplorer.ExplorationReport commit = CrashPointExplorer.builder(client)
                .name("versions")
                .workload(workload(5).operation(db -> store(db).build().apply(change)).recoveredBy(db -> {
                    VersionedStore store = store(db).build();
                    seenBeforeRecovery.computeIfAbsent(db.getName(), k -> new ArrayList<>())
                            .addAll(readProblems(store.read(ROOT), allowed));
                    store.recover(Duration.ZERO);
                }).checkedBy(db -> {
                    List<String> problems = new ArrayList<>(invariants(db, allowed));
                    Optional.ofNullable(seenBeforeRecovery.remove(db.getName()))
                            .ifPresent(seen -> seen.forEach(p -> problems.add("before recovery: " + p)));
                    return problems;
                }))
                .recoveryFaults(true)
                .build().explore();
        commit.violations().forEach(v -> details.add("five-item commit: " + v));
        progress.accept("explored a five-item change set commit: " + commit.writeSites() + " write sites, "
                + commit.scenarios() + " scenarios, " + commit.violations().size() + " violations");

        CrashPointExplorer.ExplorationReport maintenance = CrashPointExplorer.builder(client)
                .name("maintenance")
                .workload(workload(5).alsoSeeding(db -> {
                        VersionedStore store = store(db).build();
                        for (int i = 0; i < 5; i++) {
                            long n = i;
                            store.update(ROOT, (tree, c) -> {
                                Map<Object, Document> next = new HashMap<>(tree.items());
                                next.put("i0", product("v", n));
                                c.put("i0", product("v", n));
                                if (n == 2) {
                                    c.delete("i2");
                                    next.remove("i2");
                                }
                                c.meta(checksum(next));
                            });
                        }
                        store.submit(ChangeSet.on(ROOT, 6).put("x", product("lost", 0)).build());
                        store.commit(ChangeSet.on(ROOT, 6).put("i1", product("won", 1)).build());
                    })
                    .operation(db -> store(db).retention(Retention.keepLast(3)).build().recover(Duration.ZERO))
                    .recoveredBy(db -> store(db).retention(Retention.keepLast(3)).build().recover(Duration.ZERO)))
                .recoveryFaults(true)
                .build().explore();
        maintenance.violations().forEach(v -> details.add("maintenance: " + v));
        progress.accept("explored maintenance (decide, settle, clean up, prune): " + maintenance.writeSites()
                + " write sites, " + maintenance.scenarios() + " scenarios, " + maintenance.violations().size()
                + " violations");

        ChaosRunner runner = ChaosRunner.builder(client)
                .name("versions")
                .workers(6).operationsPerWorker(4).faultRate(0.08).maxPause(Duration.ofMillis(15)).recoverers(2)
                .workload(workload(4))
                .build();
        int interleavings = PatternLab.explore(List.of(
                interleaving(target, "commit", db -> store(db).build().apply(change(db, "first", 7, false))),
                interleaving(target, "delete", db -> store(db).build().apply(change(db, "gone", 8, true))),
                interleaving(target, "read-modify-write", db -> store(db).build().update(ROOT, (tree, edit) -> {
                    Map<Object, Document> next = new HashMap<>(tree.items());
                    next.put("i0", product("edited", 11));
                    edit.put("i0", next.get("i0")).meta(checksum(next));
                }))), details, progress);
        ChaosRunner.Summary summary = PatternLab.runSeeds(runner, seeds, progress);
        summary.failures().forEach(r -> details.add("chaos " + r));
        return new ChaosReport(pattern(), commit.writeSites(), commit.scenarios() + maintenance.scenarios(),
                interleavings, seeds,
                summary.operations(), summary.crashes(), summary.faults(), details.size(),
                details.subList(0, Math.min(details.size(), 20)));
    }

    /** A change of items i0 and i1 (or, deleting, of i1 alone) on version 1, with the checksum of what it makes. */
    private static ChangeSet change(MongoDatabase db, String id, long price, boolean delete) {
        Map<Object, Document> next = new HashMap<>(store(db).build().readAsOf(ROOT, 1).items());
        ChangeSet.Builder change = ChangeSet.on(ROOT, 1).id(OperationId.of(id));
        if (delete) {
            change.delete("i1");
            next.remove("i1");
        } else {
            for (String item : List.of("i0", "i1")) {
                next.put(item, product(id + "-" + item, price));
                change.put(item, next.get(item));
            }
        }
        return change.meta(checksum(next)).build();
    }

    /**
     * {@code operation} paused at each of its driver calls while maintenance keeping one version, a second writer, a
     * writer that stages a change set and leaves it, or a tree, item or time-travel reader (each answer checked whole)
     * runs.
     */
    private static InterleavingExplorer interleaving(MongoTarget target, String name,
                                                     Consumer<MongoDatabase> operation) {
        return InterleavingExplorer.builder(target)
                .name(name)
                .workload(workload(3).operation(operation))
                .actor("maintenance", db -> {
                    store(db).retention(Retention.keepLast(1)).build().recover(Duration.ZERO);
                    return List.of();
                })
                .actor("second writer", db -> {
                    store(db).build().apply(change(db, "second", 9, false));
                    return List.of();
                })
                .actor("abandoned writer", db -> {
                    store(db).build().submit(change(db, "staged", 5, false));
                    return List.of();
                })
                .actor("tree reader", db -> readProblems(store(db).build().read(ROOT), null))
                .actor("item reader", db -> store(db).build().get(ROOT, "i0").isPresent() ? List.of()
                        : List.of("item i0 read as missing"))
                .actor("time traveller", db -> {
                    List<String> problems = new ArrayList<>();
                    VersionedStore store = store(db).build();
                    for (var info : store.versions(ROOT)) {
                        try {
                            problems.addAll(readProblems(store.readAsOf(ROOT, info.version()), null));
                        } catch (dev.consistencykit.versioning.VersionPrunedException pruned) {
                            // pruned since it was listed: refused, never answered in part
                        }
                    }
                    return problems;
                })
                .build();
    }

    /**
     * Versioned documents as every exploration of this lab runs it: a root with {@code items} products; one operation
     * a random edit of one item, by a read-modify-write update or by a change set of its own; recovery with
     * maintenance; every kept version whole.
     */
    private static LabWorkload workload(int items) {
        return new LabWorkload(db -> seed(db, items), (db, random) -> {
            VersionedStore store = store(db).conflictAttempts(3).build();
            String item = "i" + random.nextInt(6);
            boolean delete = random.nextInt(4) == 0;
            String id = "w-" + Long.toHexString(random.nextLong());
            Document value = product(id, random.nextInt(1_000));
            if (random.nextBoolean()) {
                store.update(ROOT, (tree, c) -> edit(tree, c, item, delete, value));
                return;
            }
            VersionedTree tree = store.read(ROOT);
            ChangeSet.Builder c = ChangeSet.on(ROOT, tree.version()).id(OperationId.of(id));
            edit(tree, c, item, delete, value);
            store.apply(c.build());
        }, db -> store(db).build().recover(Duration.ZERO), db -> invariants(db, null));
    }

    private static void edit(VersionedTree tree, ChangeSet.Builder change, String item, boolean delete,
                             Document value) {
        Map<Object, Document> next = new HashMap<>(tree.items());
        if (delete) {
            change.delete(item);
            next.remove(item);
        } else {
            change.put(item, value);
            next.put(item, value);
        }
        change.meta(checksum(next));
    }

    /** Roots in the benchmark: each thread commits to its own share of them, so writers never conflict. */
    private static final int BENCH_ROOTS = 1_000;
    private static final int BENCH_ITEMS = 10;

    @Override
    public BenchReport bench(MongoTarget target, Bench.Settings settings, Consumer<String> progress) {
        MongoDatabase db = Bench.database(target, "benchversions", settings,
                Map.of(VersionedStoreConfig.DEFAULT_ROOTS_COLLECTION, "_id",
                        VersionedStoreConfig.DEFAULT_ITEMS_COLLECTION, "root",
                        VersionedStoreConfig.DEFAULT_HISTORY_COLLECTION, "root"));
        try {
            VersionedStore store = VersionedStore.builder(db).build();
            store.ensureIndexes();
            List<String> roots = new ArrayList<>();
            long[] versions = new long[BENCH_ROOTS];
            for (int r = 0; r < BENCH_ROOTS; r++) {
                roots.add("r" + r);
                store.createRoot("r" + r);
            }
            IntConsumer commit = t -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                int share = BENCH_ROOTS / settings.threads();
                int r = t * share + random.nextInt(share);
                ChangeSet.Builder change = ChangeSet.on(roots.get(r), versions[r]);
                int first = random.nextInt(BENCH_ITEMS);
                for (int k = 0; k < 3; k++) {
                    change.put("i" + (first + k) % BENCH_ITEMS, product("p", random.nextInt(1_000)));
                }
                versions[r] = store.commit(change.build()).version();
            };
            IntConsumer raw = Bench.rawUpdate(db.getCollection(VersionedStoreConfig.DEFAULT_ROOTS_COLLECTION), roots);
            Bench.Measured m = Bench.measure(target, db.getName(), settings, commit, raw, progress,
                    "3-item change set commits");
            double readTrips;
            try (RoundTripCounter counter = RoundTripCounter.attach(target, db.getName())) {
                for (int r = 0; r < 20; r++) {
                    store.read(roots.get(r));
                }
                readTrips = counter.snapshot().commandsPer(20);
            }
            progress.accept("settling the committed versions");
            double settleTrips;
            long settled;
            try (RoundTripCounter counter = RoundTripCounter.attach(target, db.getName())) {
                settled = store.settle();
                settleTrips = settled == 0 ? 0 : (double) counter.snapshot().commands() / settled;
            }
            return new BenchReport(pattern(), settings.threads(), m.pattern().operations(), m.roundTripsPerOp(),
                    m.writesPerOp(), m.pattern().perSecond(), m.raw().perSecond(),
                    new Document("operation", "commit(): a 3-item change set on one of " + BENCH_ROOTS
                            + " roots (each thread has its own roots, so no conflicts)")
                            .append("roots", BENCH_ROOTS).append("itemsPerRoot", BENCH_ITEMS)
                            .append("readRoundTrips", readTrips)
                            .append("settledVersions", settled)
                            .append("settleRoundTripsPerVersion", Math.round(settleTrips * 1000) / 1000.0)
                            .append("rawBaseline", Bench.RAW_BASELINE));
        } finally {
            Bench.release(db, settings);
        }
    }
}
