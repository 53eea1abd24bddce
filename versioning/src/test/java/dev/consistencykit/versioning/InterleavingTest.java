package dev.consistencykit.versioning;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.InterleavingExplorer;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * The actor table of versioned documents, run at every driver call of a commit: maintenance with retention of one
 * version (settle, clean up, prune), a second writer on the same base, and readers through {@code read}, {@code get}
 * and {@code readAsOf} (a version, and a time), whose every answer must be a whole committed version (its checksum).
 */
@ExtendWith(MongoTestExtension.class)
class InterleavingTest {

    private static final String ROOT = Catalogue.ROOT;

    private static VersionedStore store(MongoDatabase db) {
        return Catalogue.store(db).retention(Retention.keepLast(1)).build();
    }

    /** A change of two items on {@code base}, carrying the checksum of the tree it makes. */
    private static ChangeSet change(MongoDatabase db, String id, long price) {
        VersionedTree base = store(db).readAsOf(ROOT, 1);
        Map<Object, Document> next = new HashMap<>(base.items());
        ChangeSet.Builder change = ChangeSet.on(ROOT, 1).id(OperationId.of(id));
        for (String item : List.of("i0", "i1")) {
            Document value = Catalogue.product(id + "-" + item, price);
            change.put(item, value);
            next.put(item, value);
        }
        return change.meta(Catalogue.checksum(next)).build();
    }

    private static List<String> whole(VersionedTree tree) {
        Optional<String> expected = tree.meta().map(m -> m.getString("checksum"));
        if (expected.isPresent() && !expected.get().equals(tree.checksum())) {
            return List.of("version " + tree.version() + " read as " + tree.items() + ", never a committed tree");
        }
        return List.of();
    }

    @Test
    void shouldNeverShowPartOfAVersionWhenAnyActorRunsAtAnyCallOfACommit(MongoTarget target) {
        Map<String, ChangeSet> changes = new HashMap<>();
        InterleavingExplorer.Report report = actors(InterleavingExplorer.builder(target)
                .name("versions")
                .workload(CatalogueWorkload.edits(Catalogue.products(3)).retention(Retention.keepLast(1))
                        .seededBy(db -> {
                            Catalogue.seed(db, Catalogue.products(3));
                            changes.put(db.getName(), change(db, "first", 7));
                        })
                        .operation((db, random) -> store(db).apply(changes.get(db.getName())))))
                .build().explore();

        assertThat(report.schedules()).isEqualTo(report.calls().size() * 2 * 5);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    /**
     * The same actors at every call of {@code update}, which commits without staging (read, item versions,
     * compare-and-set): maintenance that fences the paused writer off and deletes its documents, a second writer that
     * commits on the same base, and the readers.
     */
    @Test
    void shouldNeverShowPartOfAVersionWhenAnyActorRunsAtAnyCallOfAnUpdate(MongoTarget target) {
        InterleavingExplorer.Report report = actors(InterleavingExplorer.builder(target)
                .name("updates")
                .workload(CatalogueWorkload.edits(Catalogue.products(3)).retention(Retention.keepLast(1))
                        .operation((db, random) -> store(db).update(ROOT, (tree, change) -> {
                            Map<Object, Document> next = new HashMap<>(tree.items());
                            for (String item : List.of("i0", "i1")) {
                                Document value = Catalogue.product("updated-" + item, 11);
                                change.put(item, value);
                                next.put(item, value);
                            }
                            change.meta(Catalogue.checksum(next));
                        }))))
                .build().explore();

        assertThat(report.calls()).contains("find versionRoots", "insert versionItems", "update versionRoots");
        assertThat(report.schedules()).isEqualTo(report.calls().size() * 2 * 5);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    /**
     * The same actors at every call of maintenance (settle, clean up, prune to one version) on two unsettled versions:
     * a second maintenance that settles and prunes what the paused one read, writers and readers. The paused settler's
     * records must not double the other's (each version has one record), and every answer stays a whole version.
     */
    @Test
    void shouldKeepOneRecordOfEachVersionWhenAnyActorRunsAtAnyCallOfMaintenance(MongoTarget target) {
        InterleavingExplorer.Report report = actors(InterleavingExplorer.builder(target)
                .name("maintenance")
                .workload(CatalogueWorkload.edits(Catalogue.products(3)).retention(Retention.keepLast(1))
                        .seededBy(db -> {
                            Catalogue.seed(db, Catalogue.products(3));
                            VersionedStore store = Catalogue.store(db).build();
                            for (String id : List.of("second", "third")) {
                                store.update(ROOT, (tree, change) -> {
                                    Map<Object, Document> next = new HashMap<>(tree.items());
                                    Document value = Catalogue.product(id, 5);
                                    change.put("i2", value);
                                    next.put("i2", value);
                                    change.meta(Catalogue.checksum(next));
                                });
                            }
                        })
                        .operation((db, random) -> store(db).recover(Duration.ZERO))))
                .build().explore();

        assertThat(report.calls()).contains("update versionHistory");
        assertThat(report.schedules()).isEqualTo(report.calls().size() * 2 * 5);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    private static InterleavingExplorer.Builder actors(InterleavingExplorer.Builder explorer) {
        return explorer
                .actor("maintenance", db -> {
                    store(db).recover(Duration.ZERO);
                    return List.of();
                })
                .actor("second writer", db -> {
                    store(db).apply(change(db, "second", 9));
                    return List.of();
                })
                .actor("tree reader", db -> whole(store(db).read(ROOT)))
                .actor("item reader", db -> {
                    VersionedTree tree = store(db).read(ROOT);
                    Optional<Document> item = store(db).get(ROOT, "i0");
                    List<String> problems = new ArrayList<>(whole(tree));
                    if (item.isEmpty()) {
                        problems.add("item i0 read as missing");
                    }
                    return problems;
                })
                .actor("time traveller", db -> {
                    List<String> problems = new ArrayList<>();
                    for (VersionInfo info : store(db).versions(ROOT)) {
                        try {
                            problems.addAll(whole(store(db).readAsOf(ROOT, info.version())));
                        } catch (VersionPrunedException pruned) {
                            // pruned since it was listed: refused, never answered in part
                        }
                        if (info.committedAt().isEmpty()) {
                            continue;
                        }
                        try {
                            VersionedTree then = store(db).readAsOf(ROOT, info.committedAt().get());
                            problems.addAll(whole(then));
                            if (then.version() < info.version()) {
                                problems.add("as of the time version " + info.version() + " was committed, read "
                                        + then.version());
                            }
                        } catch (VersionPrunedException pruned) {
                            // the same, as of a time
                        }
                    }
                    problems.addAll(whole(store(db).readAsOf(ROOT, java.time.Instant.parse("9999-01-01T00:00:00Z"))));
                    return problems;
                });
    }
}
