package dev.consistencykit.cli.lab;

import static com.mongodb.client.model.Filters.eq;
import static dev.consistencykit.cli.lab.ContenderWorkloads.ACCOUNTS;
import static dev.consistencykit.cli.lab.ContenderWorkloads.OPENING;
import static dev.consistencykit.cli.lab.ContenderWorkloads.TOTAL;
import static dev.consistencykit.cli.lab.ContenderWorkloads.amount;
import static dev.consistencykit.cli.lab.ContenderWorkloads.pair;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.testkit.Accounts;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.VersionedStore;
import dev.consistencykit.versioning.VersionedStoreConfig;
import dev.consistencykit.versioning.VersionedTree;

/** The accounts as the versioned items of one root: a transfer is one change set of two items. */
final class VersionedAccounts implements Contender {

    private static final String ROOT = "bank";

    private static VersionedStore store(MongoDatabase db) {
        return VersionedStore.builder(db).retryPolicy(PatternLab.FAST_RETRY).conflictAttempts(50).build();
    }

    @Override
    public String name() {
        return "versioned documents";
    }

    @Override
    public String pattern() {
        return "versioning";
    }

    @Override
    public String workload() {
        return "bank-transfer";
    }

    @Override
    public void setup(MongoDatabase db) {
        VersionedStore store = store(db);
        store.ensureIndexes();
        store.createRoot(ROOT);
        ChangeSet.Builder accounts = ChangeSet.on(ROOT, 0);
        for (int i = 0; i < ACCOUNTS; i++) {
            accounts.put("a" + i, new Document(Accounts.BALANCE, OPENING));
        }
        store.commit(accounts.build());
    }

    @Override
    public Instance start(MongoDatabase db) {
        VersionedStore store = store(db);
        return new ContenderActions(random -> {
            int[] p = pair(random);
            long amount = amount(random);
            store.update(ROOT, (tree, change) -> {
                change.put("a" + p[0], new Document(Accounts.BALANCE, balance(tree, "a" + p[0]) - amount));
                change.put("a" + p[1], new Document(Accounts.BALANCE, balance(tree, "a" + p[1]) + amount));
            });
        }, null, store::recover, random -> newestItemsSum(db) == TOTAL,
                random -> Optional.of(sum(store.read(ROOT)) == TOTAL));
    }

    /** What a naive reader of the item documents sees: each item's newest document, committed or not. */
    private static long newestItemsSum(MongoDatabase db) {
        Map<Object, Document> newest = new HashMap<>();
        for (Document d : db.getCollection(VersionedStoreConfig.DEFAULT_ITEMS_COLLECTION)
                .find(eq("root", ROOT))) {
            newest.merge(d.get("item"), d, (a, b) -> ((Number) a.get("version")).longValue()
                    >= ((Number) b.get("version")).longValue() ? a : b);
        }
        long sum = 0;
        for (Document d : newest.values()) {
            if (d.get("value") instanceof Document item && item.get(Accounts.BALANCE) instanceof Number n) {
                sum += n.longValue();
            }
        }
        return sum;
    }

    @Override
    public String anomalies() {
        return "a raw read of each item's newest document sees the staged documents of writers that have not"
                + " committed, lost the race or crashed; read() sees exactly one committed version.";
    }

    private static long balance(VersionedTree tree, String account) {
        return tree.item(account).orElseThrow().getLong(Accounts.BALANCE);
    }

    private static long sum(VersionedTree tree) {
        return tree.items().values().stream().mapToLong(d -> d.getLong(Accounts.BALANCE)).sum();
    }

    @Override
    public List<String> invariants(MongoDatabase db) {
        List<String> problems = new ArrayList<>();
        VersionedStore store = store(db);
        if (store.status().inFlight() != 0) {
            problems.add(store.status().inFlight() + " change sets still staged");
        }
        VersionedTree tree = store.read(ROOT);
        for (long v = 1; v <= tree.version(); v++) {
            long total = sum(store.readAsOf(ROOT, v));
            if (total != TOTAL) {
                problems.add("version " + v + " holds " + total + ", not " + TOTAL);
            }
        }
        return problems;
    }
}
