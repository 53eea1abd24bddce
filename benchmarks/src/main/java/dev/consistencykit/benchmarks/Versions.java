package dev.consistencykit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

import org.bson.Document;
import org.javers.core.Javers;
import org.javers.core.JaversBuilder;
import org.javers.core.metamodel.annotation.Id;
import org.javers.core.metamodel.object.CdoSnapshot;
import org.javers.repository.jql.QueryBuilder;
import org.javers.repository.mongo.MongoRepository;
import org.javers.shadow.Shadow;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.versioning.CommitResult;
import dev.consistencykit.versioning.VersionedStore;
import dev.consistencykit.versioning.VersionedStoreConfig;
import dev.consistencykit.versioning.VersionedTree;

/**
 * The versioned-documents workload, on small trees of {@value #LINES} items (an order and its lines): change one
 * item's quantity and commit, read the latest version, read the version before it. Caller {@code c} of {@code n} works
 * on trees {@code c, c + n, c + 2n, ...}, so that no two callers change one tree at once (JaVers has no guard against
 * that). The documents of a size are trees.
 */
final class Versions {

    static final int LINES = 5;

    /** Quantities written, each once, so that no commit is empty (JaVers makes no version of an unchanged object). */
    private static final java.util.concurrent.atomic.AtomicInteger QUANTITIES = new java.util.concurrent.atomic
            .AtomicInteger(1);

    private Versions() {
    }

    static List<String> problems(long wrongReads) {
        return wrongReads == 0 ? List.of()
                : List.of(wrongReads + " reads did not return the version just committed or the one before");
    }

    static int tree(java.util.SplittableRandom random, int caller, int callers, int trees) {
        int perCaller = (trees - caller + callers - 1) / callers;
        return caller + callers * random.nextInt(perCaller);
    }

    /** consistency-kit's versioned documents. */
    static final class Ours implements Side {

        private final MongoDatabase db;
        private VersionedStore store;
        private int trees;
        private final AtomicLong wrongReads = new AtomicLong();

        Ours(MongoClient client) {
            this.db = client.getDatabase("peers_versioning");
        }

        @Override
        public String name() {
            return "consistency-kit versioning";
        }

        /** The roots on {@code _id}, the item versions and version records on their root: one tree on one shard. */
        @Override
        public Map<String, String> shardKeys() {
            return Map.of(VersionedStoreConfig.DEFAULT_ROOTS_COLLECTION, "_id",
                    VersionedStoreConfig.DEFAULT_ITEMS_COLLECTION, "root",
                    VersionedStoreConfig.DEFAULT_HISTORY_COLLECTION, "root");
        }

        @Override
        public String database() {
            return db.getName();
        }

        @Override
        public void prepare(int documents) {
            db.drop();
            store = VersionedStore.builder(db).build();
            store.ensureIndexes();
            Fill.parallel(documents, i -> {
                store.createRoot("t" + i);
                store.update("t" + i, (tree, change) -> {
                    for (int line = 0; line < LINES; line++) {
                        change.put("l" + line, new Document("sku", "sku-" + line).append("qty", 1));
                    }
                });
            });
            trees = documents;
        }

        @Override
        public Phase run(int callers, Duration duration) {
            return ClosedLoop.run(callers, duration, (caller, n, random) -> {
                String root = "t" + tree(random, caller, n, trees);
                int line = random.nextInt(LINES);
                int qty = QUANTITIES.incrementAndGet();   // never the one there: every commit is a change
                CommitResult committed = store.update(root, (tree, change) -> change.put("l" + line,
                        new Document("sku", "sku-" + line).append("qty", qty)));
                VersionedTree latest = store.read(root);
                VersionedTree before = store.readAsOf(root, committed.version() - 1);
                if (latest.item("l" + line).map(d -> d.getInteger("qty")).orElse(-1) != qty
                        || before.version() != committed.version() - 1) {
                    wrongReads.incrementAndGet();
                }
            });
        }

        @Override
        public List<String> check() {
            return problems(wrongReads.get());
        }

        @Override
        public void close() {
            // the client is the harness's
        }
    }

    /** An order as JaVers versions it: an entity with its lines as value objects. */
    public static final class Order {
        @Id
        String id;
        List<Line> lines = new ArrayList<>();

        /** For JaVers. */
        public Order() {
        }

        Order(String id) {
            this.id = id;
            for (int line = 0; line < LINES; line++) {
                lines.add(new Line("sku-" + line, 1));
            }
        }
    }

    /**
     * A line of an order, registered with JaVers as a value (compared by {@code equals}, stored inside the order's
     * snapshot): a changed line makes a new version of the order, as a changed item makes a new version of our tree.
     */
    public static final class Line {
        String sku;
        int qty;

        /** For JaVers. */
        public Line() {
        }

        Line(String sku, int qty) {
            this.sku = sku;
            this.qty = qty;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Line other && other.sku.equals(sku) && other.qty == qty;
        }

        @Override
        public int hashCode() {
            return sku.hashCode() * 31 + qty;
        }
    }

    /**
     * JaVers with its MongoDB repository: commit the changed order, its latest snapshot, and its shadow (the object
     * rebuilt) at the version before.
     */
    static final class JaVers implements Side {

        private final MongoDatabase db;
        private Javers javers;
        private Order[] orders;
        private final AtomicLong wrongReads = new AtomicLong();

        JaVers(MongoClient client) {
            this.db = client.getDatabase("peers_javers");
        }

        @Override
        public String name() {
            return "JaVers " + Peers.version("javers");
        }

        /**
         * The snapshots on the object they are of ({@code globalId_key}, which every query of the workload names); the
         * one document of the head id unsharded.
         */
        @Override
        public Map<String, String> shardKeys() {
            return Map.of("jv_snapshots", "globalId_key");
        }

        @Override
        public String database() {
            return db.getName();
        }

        @Override
        public void prepare(int documents) {
            db.drop();
            try {
                javers = JaversBuilder.javers().registerValue(Line.class)
                        .registerJaversRepository(new MongoRepository(db)).build();
                Order[] all = new Order[documents];
                Fill.parallel(documents, i -> {
                    all[i] = new Order("t" + i);
                    javers.commit("bench", all[i]);
                });
                orders = all;
            } catch (RuntimeException e) {
                throw new SideUnavailableException("JaVers failed to set up: " + Failures.describe(e), e);
            }
        }

        @Override
        public Phase run(int callers, Duration duration) {
            return ClosedLoop.run(callers, duration, (caller, n, random) -> {
                Order order = orders[tree(random, caller, n, orders.length)];
                int qty = QUANTITIES.incrementAndGet();   // never the one there: every commit is a change
                int line = random.nextInt(LINES);
                order.lines.set(line, new Line("sku-" + line, qty));
                javers.commit("bench", order);
                Optional<CdoSnapshot> latest = javers.getLatestSnapshot(order.id, Order.class);
                long version = latest.map(CdoSnapshot::getVersion).orElse(0L);
                List<Shadow<Order>> before = javers.findShadows(QueryBuilder.byInstanceId(order.id, Order.class)
                        .withVersion(version - 1).build());
                if (latest.isEmpty() || before.size() != 1) {
                    wrongReads.incrementAndGet();
                }
            });
        }

        @Override
        public List<String> check() {
            return problems(wrongReads.get());
        }

        @Override
        public void close() {
            // the client is the harness's
        }
    }
}
