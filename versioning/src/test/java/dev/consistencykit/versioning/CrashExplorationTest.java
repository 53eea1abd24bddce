package dev.consistencykit.versioning;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.bson.Document;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * A five-item change set committed with a crash at every write in every mode, then recovery (also by two recoverers
 * at once, and crashed itself) in a fresh instance. Before recovery a reader must already see exactly the state before
 * or after the change set; after it, nothing is staged or left behind and every version reads whole.
 */
@ExtendWith(MongoTestExtension.class)
class CrashExplorationTest {

    static final Map<Object, Document> BEFORE = Catalogue.products(5);
    /** Three puts (two replace, one adds), two deletes. */
    static final ChangeSet CHANGE = Catalogue.withChecksum(BEFORE, ChangeSet.on(Catalogue.ROOT, 1)
            .id(OperationId.of("five-items"))
            .put("i0", Catalogue.product("Renamed 0", 1)).put("i1", Catalogue.product("Renamed 1", 2))
            .put("i7", Catalogue.product("New 7", 3)).delete("i3").delete("i4"));
    static final Set<Map<Object, Document>> ALLOWED = Set.of(BEFORE, Catalogue.applied(BEFORE, CHANGE));

    /** The explorer of {@link #CHANGE}; problems a reader saw before recovery are reported with the invariants. */
    static CrashPointExplorer explorer(MongoClient client, boolean recoveryFaults) {
        return CrashPointExplorer.builder(client)
                .name("versions")
                .workload(CatalogueWorkload.edits(BEFORE).operation((db, random) -> Catalogue.store(db).build()
                        .apply(CHANGE)).endingIn(ALLOWED).readBeforeRecovery())
                .recoveryFaults(recoveryFaults)
                .build();
    }

    @Test
    void shouldShowTheWholeChangeSetOrNoneOfItWhenCrashedAtAnyWrite(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = explorer(client, true).explore();

        assertThat(report.sites()).extracting(s -> s.method() + " " + s.collection()).containsExactly(
                "findOneAndUpdate versionRoots", "insertMany versionItems", "updateOne versionRoots");
        assertThat(report.scenarios()).isGreaterThanOrEqualTo(1 + 3 * FaultMode.values().length * 2);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    /**
     * The same change set made by {@code update}, which commits without staging (the read, the item versions, the
     * compare-and-set): a writer that dies before its compare-and-set leaves documents no reader sees, and recovery's
     * clean-up moves the root's fence on and deletes them, though the root never moved past their base.
     */
    @Test
    void shouldShowTheWholeUpdateOrNoneOfItWhenCrashedAtAnyWrite(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client)
                .name("updates")
                .workload(CatalogueWorkload.edits(BEFORE).operation((db, random) -> Catalogue.store(db).build()
                        .update(Catalogue.ROOT, (tree, change) -> {
                            CHANGE.changes().forEach((item, value) -> {
                                if (value.isPresent()) {
                                    change.put(item, value.get());
                                } else {
                                    change.delete(item);
                                }
                            });
                            CHANGE.meta().ifPresent(change::meta);
                        })).endingIn(ALLOWED).readBeforeRecovery())
                .recoveryFaults(true)
                .build().explore();

        assertThat(report.sites()).extracting(s -> s.method() + " " + s.collection()).containsExactly(
                "insertMany versionItems", "updateOne versionRoots");
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    // heavy: on a real engine only when asked (docs/servers.md): every write of maintenance over many versions, 450 s
    // there; the commit exploration beside it and the chaos runs exercise maintenance on every server
    @Tag("heavy")
    @Test
    void shouldKeepEveryKeptVersionWholeWhenMaintenanceCrashesAtAnyWrite(MongoClient client) {
        // six versions of i0, an item deleted on the way, a change set staged and lost; keep the last 3
        List<Map<Object, Document>> states = new ArrayList<>();
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client)
                .name("maintenance")
                .workload(CatalogueWorkload.edits(BEFORE).retention(Retention.keepLast(3))
                        .seededBy(db -> {
                            states.clear();
                            states.add(Catalogue.seed(db, BEFORE));
                            VersionedStore store = Catalogue.store(db).build();
                            for (int i = 0; i < 5; i++) {
                                int n = i;
                                store.update(Catalogue.ROOT, (tree, change) -> {
                                    change.put("i0", Catalogue.product("v", n));
                                    if (n == 2) {
                                        change.delete("i2");
                                    }
                                });
                                states.add(store.read(Catalogue.ROOT).items());
                            }
                            store.submit(ChangeSet.on(Catalogue.ROOT, 6).put("x", Catalogue.product("lost", 0))
                                    .build());
                            store.commit(ChangeSet.on(Catalogue.ROOT, 6).put("i0", Catalogue.product("won", 7))
                                    .build());
                            states.add(store.read(Catalogue.ROOT).items());
                        })
                        .operation((db, random) -> Catalogue.store(db).retention(Retention.keepLast(3)).build()
                                .recover(Duration.ZERO))
                        .alsoChecking(db -> {
                            List<String> problems = new ArrayList<>(Catalogue.invariants(db, Set.of(states.get(6))));
                            VersionedStore store = Catalogue.store(db).build();
                            for (long v = 5; v <= 7; v++) {
                                if (!store.readAsOf(Catalogue.ROOT, v).items().equals(states.get((int) v - 1))) {
                                    problems.add("version " + v + " reads "
                                            + store.readAsOf(Catalogue.ROOT, v).items());
                                }
                            }
                            return problems;
                        }))
                .recoveryFaults(true)
                .build().explore();

        assertThat(report.writeSites()).isGreaterThanOrEqualTo(6);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }
}
