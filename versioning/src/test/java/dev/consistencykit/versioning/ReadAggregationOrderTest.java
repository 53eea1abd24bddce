package dev.consistencykit.versioning;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * A read is one aggregation — the root, then the item versions that may be visible at the version it holds, then the
 * root's floor again — so whatever happens between those stages happens inside the server, where no test can pause.
 * Here it happens for real, on whichever server runs the suite: a writer commits changes that each replace every
 * item, and a maintainer settles and prunes to {@code keepLast(1)} after each, while readers read the current tree
 * and the tree as of the version before. Every tree a reader got must be exactly the tree committed at its version
 * (never a version with items missing because they were pruned between the stages, never items of two versions);
 * a read of a pruned version must be refused, not answered. The run ends after a number of commits, not a time.
 */
@ExtendWith(MongoTestExtension.class)
class ReadAggregationOrderTest {

    private static final int ITEMS = 20;
    private static final int COMMITS = 100;

    @Test
    void shouldNeverReturnATreeThatWasNotCommittedWhilePruningRunsBetweenTheStagesOfARead(MongoDatabase db)
            throws Exception {
        Map<Object, Document> first = new java.util.HashMap<>();
        for (int i = 0; i < ITEMS; i++) {
            first.put("i" + i, Catalogue.product("v1", 1));
        }
        Catalogue.seed(db, first);
        VersionedStore store = Catalogue.store(db).retention(Retention.keepLast(1)).build();
        Map<Long, Map<Object, Document>> committed = new ConcurrentHashMap<>();
        committed.put(1L, Map.copyOf(first));
        AtomicBoolean done = new AtomicBoolean();
        List<String> problems = new CopyOnWriteArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<Integer>> readers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                boolean asOfBefore = r == 1;
                readers.add(pool.submit(() -> {
                    int answered = 0;
                    while (!done.get()) {
                        VersionedTree tree;
                        try {
                            tree = asOfBefore ? readBefore(store) : store.read(Catalogue.ROOT);
                        } catch (VersionPrunedException | dev.consistencykit.core.InvalidInputException refused) {
                            continue;   // pruned before or while it was read, or not yet committed: refused
                        }
                        if (tree == null) {
                            continue;
                        }
                        answered++;
                        Map<Object, Document> expected = committed.get(tree.version());
                        if (expected != null && !expected.equals(tree.items())) {
                            problems.add("version " + tree.version() + " read as " + tree.items().keySet()
                                    + " with " + tree.items().values() + ", committed as " + expected.values());
                        }
                    }
                    return answered;
                }));
            }
            for (int c = 2; c <= COMMITS; c++) {
                String title = "v" + c;
                VersionedTree before = store.read(Catalogue.ROOT);
                ChangeSet.Builder change = ChangeSet.on(Catalogue.ROOT, before.version());
                Map<Object, Document> next = new java.util.HashMap<>();
                for (int i = 0; i < ITEMS; i++) {
                    next.put("i" + i, Catalogue.product(title, c));
                    change.put("i" + i, Catalogue.product(title, c));
                }
                committed.put(before.version() + 1, Map.copyOf(next));
                store.commit(change.build());
                store.recover(Duration.ZERO);
            }
            done.set(true);
            int answered = 0;
            for (Future<Integer> reader : readers) {
                answered += reader.get(60, TimeUnit.SECONDS);
            }
            assertThat(problems).isEmpty();
            assertThat(answered).as("reads answered").isPositive();
        } finally {
            done.set(true);
            pool.shutdownNow();
        }
    }

    private static VersionedTree readBefore(VersionedStore store) {
        long current = store.versions(Catalogue.ROOT).stream().mapToLong(VersionInfo::version).max().orElse(1);
        return current <= 1 ? null : store.readAsOf(Catalogue.ROOT, current - 1);
    }
}
