package dev.consistencykit.versioning;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.Workload;

/**
 * Versioned documents described once for every runner of the testkit: a catalogue root with its products seeded, one
 * operation as a process makes it on a store of its own (by default a random edit of one item: a read-modify-write
 * update, a blind commit or a staged change set, each carrying the checksum of the tree it makes), recovery with
 * maintenance as a fresh process runs it, and the catalogue's invariants (every kept version whole, nothing staged or
 * left behind) read back. A test varies the operation, the retention, the seeding, or the states the root may end in.
 */
final class CatalogueWorkload implements Workload {

    private final Map<Object, Document> products;
    private final Retention retention;
    private final BiConsumer<MongoDatabase, Random> operation;
    private final Consumer<MongoDatabase> seeding;
    private final Set<Map<Object, Document>> allowed;
    private final Function<MongoDatabase, List<String>> invariants;
    /** Problems a reader saw before recovery, by database: reported with the invariants. */
    private final Map<String, List<String>> seenBeforeRecovery = new ConcurrentHashMap<>();
    private final boolean readsBeforeRecovery;

    private CatalogueWorkload(Map<Object, Document> products, Retention retention,
                              BiConsumer<MongoDatabase, Random> operation, Consumer<MongoDatabase> seeding,
                              Set<Map<Object, Document>> allowed, Function<MongoDatabase, List<String>> invariants,
                              boolean readsBeforeRecovery) {
        this.products = products;
        this.retention = retention;
        this.operation = operation;
        this.seeding = seeding;
        this.allowed = allowed;
        this.invariants = invariants;
        this.readsBeforeRecovery = readsBeforeRecovery;
    }

    /** Random edits of items {@code i0…i5} of a root seeded with {@code products}. */
    static CatalogueWorkload edits(Map<Object, Document> products) {
        return new CatalogueWorkload(Map.copyOf(products), Retention.KEEP_ALL, CatalogueWorkload::randomEdit,
                db -> Catalogue.seed(db, products), null, null, false);
    }

    private static void randomEdit(MongoDatabase db, Random random) {
        VersionedStore store = Catalogue.store(db).conflictAttempts(3).build();
        String item = "i" + random.nextInt(6);
        boolean delete = random.nextInt(4) == 0;
        String id = "w-" + Long.toHexString(random.nextLong());
        Document value = Catalogue.product(id, random.nextInt(1_000));
        int kind = random.nextInt(3);
        if (kind == 0) {
            store.update(Catalogue.ROOT, (tree, change) -> edit(tree, change, item, delete, value));
            return;
        }
        VersionedTree tree = store.read(Catalogue.ROOT);
        ChangeSet.Builder change = ChangeSet.on(Catalogue.ROOT, tree.version()).id(OperationId.of(id));
        edit(tree, change, item, delete, value);
        if (kind == 1) {
            store.apply(change.build());
        } else {
            store.submit(change.build());
        }
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
        change.meta(Catalogue.checksum(next));
    }

    /** The same catalogue with {@code value} as its one operation (it builds its stores on the database it is given). */
    CatalogueWorkload operation(BiConsumer<MongoDatabase, Random> value) {
        return new CatalogueWorkload(products, retention, value, seeding, allowed, invariants, readsBeforeRecovery);
    }

    /** The same catalogue, recovered and maintained by stores keeping {@code value}. */
    CatalogueWorkload retention(Retention value) {
        return new CatalogueWorkload(products, value, operation, seeding, allowed, invariants, readsBeforeRecovery);
    }

    /** The same catalogue, seeded by {@code value} instead (which seeds the root itself). */
    CatalogueWorkload seededBy(Consumer<MongoDatabase> value) {
        return new CatalogueWorkload(products, retention, operation, value, allowed, invariants, readsBeforeRecovery);
    }

    /** The same catalogue, whose root must end in one of {@code states}. */
    CatalogueWorkload endingIn(Set<Map<Object, Document>> states) {
        return new CatalogueWorkload(products, retention, operation, seeding, Set.copyOf(states), invariants,
                readsBeforeRecovery);
    }

    /** The same catalogue, also checked by {@code value}. */
    CatalogueWorkload alsoChecking(Function<MongoDatabase, List<String>> value) {
        return new CatalogueWorkload(products, retention, operation, seeding, allowed, value, readsBeforeRecovery);
    }

    /**
     * The same catalogue, read by a reader just before recovery: what it sees must already be one of the states the
     * root may end in ({@link #endingIn}), however the operation crashed.
     */
    CatalogueWorkload readBeforeRecovery() {
        return new CatalogueWorkload(products, retention, operation, seeding, allowed, invariants, true);
    }

    /** A store as one process builds it, on {@code db}. */
    VersionedStore store(MongoDatabase db) {
        return Catalogue.store(db).retention(retention).build();
    }

    @Override
    public void seed(MongoDatabase database) {
        seeding.accept(database);
    }

    @Override
    public void operate(MongoDatabase database, Random random) {
        operation.accept(database, random);
    }

    @Override
    public void recover(MongoDatabase database) {
        VersionedStore store = store(database);
        if (readsBeforeRecovery) {
            seenBeforeRecovery.computeIfAbsent(database.getName(), k -> new ArrayList<>())
                    .addAll(Catalogue.readProblems(store, allowed));
        }
        store.recover(Duration.ZERO);
    }

    @Override
    public List<String> invariants(MongoDatabase database) {
        List<String> problems = new ArrayList<>(Catalogue.invariants(database, allowed));
        if (invariants != null) {
            problems.addAll(invariants.apply(database));
        }
        List<String> seen = seenBeforeRecovery.remove(database.getName());
        if (seen != null) {
            seen.forEach(p -> problems.add("before recovery: " + p));
        }
        return problems;
    }

    @Override
    public String toString() {
        return "catalogue edits";
    }
}
