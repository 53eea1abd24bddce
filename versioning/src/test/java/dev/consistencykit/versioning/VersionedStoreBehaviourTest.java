package dev.consistencykit.versioning;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.testkit.IndexCoverage;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;
import dev.consistencykit.testkit.RoundTripCounter;

@ExtendWith(MongoTestExtension.class)
class VersionedStoreBehaviourTest {

    private static final String ROOT = Catalogue.ROOT;

    private static VersionedStore ready(MongoDatabase db) {
        Catalogue.seed(db, Catalogue.products(3));
        return Catalogue.store(db).build();
    }

    @Test
    void shouldCommitInThreeRoundTripsAndReadTheWholeTreeInOne(MongoTarget target, MongoDatabase db) {
        VersionedStore store = ready(db);
        ChangeSet change = ChangeSet.on(ROOT, 1).put("i0", Catalogue.product("A", 1))
                .put("i1", Catalogue.product("B", 2)).delete("i2").build();
        store.ensureIndexes();

        long commitTrips;
        long readTrips;
        long updateTrips;
        long readAsOfTrips;
        long getTrips;
        VersionedTree tree;
        try (RoundTripCounter counter = RoundTripCounter.attach(target, db.getName())) {
            store.commit(change);
            commitTrips = counter.snapshot().commands();
            counter.reset();
            tree = store.read(ROOT);
            readTrips = counter.snapshot().commands();
            counter.reset();
            store.update(ROOT, (current, edit) -> edit.put("i3", Catalogue.product("C", 3)));
            updateTrips = counter.snapshot().commands();
            counter.reset();
            store.readAsOf(ROOT, 2);
            readAsOfTrips = counter.snapshot().commands();
            counter.reset();
            store.get(ROOT, "i0");
            getTrips = counter.snapshot().commands();
        }

        assertThat(commitTrips).as("stage, the item versions, the compare-and-set").isEqualTo(3);
        assertThat(readTrips).as("one aggregation: the root, the items, the root's floor again").isEqualTo(1);
        assertThat(updateTrips).as("the read, the item versions, the compare-and-set").isEqualTo(3);
        assertThat(readAsOfTrips).isEqualTo(1);
        assertThat(getTrips).isEqualTo(1);
        assertThat(tree.version()).isEqualTo(2);
        assertThat(tree.items()).containsOnlyKeys("i0", "i1");
        assertThat(tree.item("i0")).contains(Catalogue.product("A", 1));
    }

    /**
     * Nothing of the store's safety rests on an index but {@code _id}'s: an item version and a version record are each
     * one by its {@code _id}. A store commits and settles before {@code ensureIndexes()} (its queries then scan) and has
     * no setup problem to report. (Two settlers of the same versions: {@code InterleavingTest}.)
     */
    @Test
    void shouldRestOnNoIndexButIdsAndRecordEachSettledVersionByItsId(MongoDatabase db) {
        VersionedStore store = Catalogue.store(db).build();
        store.createRoot(ROOT);
        for (int v = 0; v < 3; v++) {
            store.commit(ChangeSet.on(ROOT, v).put("i0", Catalogue.product("A", v)).build());
        }

        assertThat(store.setupProblems()).isEmpty();
        assertThat(store.settle()).isEqualTo(3);

        assertThat(db.getCollection(VersionedStoreConfig.DEFAULT_HISTORY_COLLECTION).find(Filters.eq("root", ROOT))
                .map(d -> d.get("_id"))).containsExactlyInAnyOrder(
                        new Document("r", ROOT).append("v", 1L), new Document("r", ROOT).append("v", 2L),
                        new Document("r", ROOT).append("v", 3L));
        assertThat(store.read(ROOT).item("i0")).contains(Catalogue.product("A", 2));
        assertThat(Catalogue.invariants(db, null)).isEmpty();
    }

    @Test
    void shouldReturnEveryCommittedVersionExactlyWhenTravellingInTime(MongoDatabase db) {
        VersionedStore store = ready(db);
        java.util.List<Map<Object, Document>> states = new java.util.ArrayList<>();
        states.add(Map.of());
        states.add(store.read(ROOT).items());
        for (int v = 2; v <= 8; v++) {
            int n = v;
            store.update(ROOT, (tree, change) -> {
                change.put("i" + (n % 4), Catalogue.product("v" + n, n));
                if (n % 3 == 0) {
                    change.delete("i" + ((n + 1) % 4));
                }
            });
            states.add(store.read(ROOT).items());
            if (v == 5) {
                store.settle();
            }
        }

        for (int v = 0; v < states.size(); v++) {
            assertThat(store.readAsOf(ROOT, v).items()).as("version %d", v).isEqualTo(states.get(v));
        }
        assertThat(store.versions(ROOT)).extracting(VersionInfo::version).containsExactly(1L, 2L, 3L, 4L, 5L, 6L,
                7L, 8L);
        assertThat(store.history(ROOT, "i0")).extracting(ItemVersion::version).containsExactly(1L, 3L, 4L, 8L);
        assertThat(store.history(ROOT, "i0").get(1).deleted()).isTrue();
        VersionDiff diff = store.diff(ROOT, 1, 3);
        assertThat(diff.changed()).containsOnlyKeys("i2");
        assertThat(diff.added()).containsOnlyKeys("i3");
        assertThat(diff.removed()).containsOnlyKeys("i0");
        assertThat(store.diff(ROOT, 4, 4).isEmpty()).isTrue();
    }

    @Test
    void shouldGiveATypedConflictToTheSecondWriterOnTheSameBase(MongoDatabase db) {
        VersionedStore store = ready(db);
        store.commit(ChangeSet.on(ROOT, 1).put("i0", Catalogue.product("first", 1)).build());

        assertThatThrownBy(() -> store.commit(ChangeSet.on(ROOT, 1).put("i1", Catalogue.product("second", 2)).build()))
                .isInstanceOf(VersionConflictException.class)
                .satisfies(e -> assertThat(((VersionConflictException) e).currentVersion()).isEqualTo(2));
        assertThat(store.read(ROOT).item("i1")).contains(Catalogue.product("Item 1", 200));
    }

    @Test
    void shouldRetryAConflictingUpdateFromAFreshRead(MongoDatabase db) {
        VersionedStore store = ready(db);
        VersionedStore other = Catalogue.store(db).build();
        int[] calls = {0};

        CommitResult result = store.update(ROOT, (tree, change) -> {
            if (calls[0]++ == 0) {
                other.commit(ChangeSet.on(ROOT, tree.version()).put("i0", Catalogue.product("sneaked in", 7)).build());
            }
            long price = tree.item("i0").orElseThrow().getLong("price");
            change.put("i0", Catalogue.product("doubled", price * 2));
        });

        assertThat(calls[0]).isEqualTo(2);
        assertThat(result.version()).isEqualTo(3);
        assertThat(store.read(ROOT).item("i0")).contains(Catalogue.product("doubled", 14));
    }

    @Test
    void shouldAbortAStagedChangeSetThatLosesTheCompareAndSetAndDeleteItsDocuments(MongoDatabase db) {
        VersionedStore store = ready(db);
        ChangeSet loser = ChangeSet.on(ROOT, 1).id(OperationId.of("loser")).put("x", Catalogue.product("X", 1))
                .build();
        store.submit(loser);
        store.commit(ChangeSet.on(ROOT, 1).put("z", Catalogue.product("Z", 1)).build());

        OperationResult result = store.apply(loser);

        assertThat(result.outcome()).isEqualTo(OperationResult.Outcome.ABORTED);
        assertThat(store.read(ROOT).items()).containsKey("z").doesNotContainKey("x");
        assertThat(db.getCollection(VersionedStoreConfig.DEFAULT_ITEMS_COLLECTION)
                .countDocuments(Filters.eq("item", "x"))).isZero();
        assertThat(store.metrics().conflicts()).isEqualTo(1);
    }

    @Test
    void shouldCommitAStaleStagedChangeSetWhoseBaseIsStillCurrent(MongoDatabase db) {
        VersionedStore store = ready(db);
        store.submit(ChangeSet.on(ROOT, 1).id(OperationId.of("staged")).put("x", Catalogue.product("X", 1)).build());
        assertThat(store.read(ROOT).items()).doesNotContainKey("x");

        var report = Catalogue.store(db).build().recover(Duration.ZERO);

        assertThat(report.rolledForward()).isEqualTo(1);
        assertThat(store.read(ROOT).version()).isEqualTo(2);
        assertThat(store.read(ROOT).items()).containsKey("x");
    }

    @Test
    void shouldNotCommitAStagedChangeSetWhoseBaseMoved(MongoDatabase db) {
        VersionedStore store = ready(db);
        store.submit(ChangeSet.on(ROOT, 1).id(OperationId.of("staged")).put("x", Catalogue.product("X", 1)).build());
        store.commit(ChangeSet.on(ROOT, 1).put("z", Catalogue.product("Z", 1)).build());

        var report = Catalogue.store(db).build().recover(Duration.ZERO);

        assertThat(report.rolledBack()).isEqualTo(1);
        assertThat(store.read(ROOT).items()).containsKey("z").doesNotContainKey("x");
        assertThat(store.status().count("abandoned")).isEqualTo(1);
    }

    @Test
    void shouldLeaveAFreshStagedChangeSetAloneWhenRecoveringWithALongThreshold(MongoDatabase db) {
        VersionedStore store = ready(db);
        store.submit(ChangeSet.on(ROOT, 1).put("x", Catalogue.product("X", 1)).build());

        var report = store.recover(Duration.ofHours(1));

        assertThat(report.examined()).isZero();
        assertThat(store.status().inFlight()).isEqualTo(1);
        assertThat(db.getCollection(VersionedStoreConfig.DEFAULT_ITEMS_COLLECTION)
                .countDocuments(Filters.eq("item", "x"))).isEqualTo(1);
    }

    @Test
    void shouldSettleCommittedVersionsSoReadsSkipReplacedHistory(MongoDatabase db) {
        VersionedStore store = ready(db);
        for (int i = 0; i < 5; i++) {
            long price = i;
            store.update(ROOT, (tree, change) -> change.put("i0", Catalogue.product("p", price)));
        }
        Map<Object, Document> before = store.read(ROOT).items();

        long settled = store.settle();

        assertThat(settled).isEqualTo(6);
        assertThat(store.read(ROOT).items()).isEqualTo(before);
        var items = db.getCollection(VersionedStoreConfig.DEFAULT_ITEMS_COLLECTION);
        assertThat(items.countDocuments(Filters.eq("committed", false))).isZero();
        assertThat(items.countDocuments(Filters.and(Filters.eq("item", "i0"), Filters.eq("until", Long.MAX_VALUE))))
                .isEqualTo(1);
        assertThat(store.readAsOf(ROOT, 3).item("i0")).contains(Catalogue.product("p", 1));
    }

    @Test
    void shouldSettleBeforeStagingWhenARootReachesTheThreshold(MongoDatabase db) {
        ready(db);
        VersionedStore store = Catalogue.store(db).settleThreshold(4).build();
        for (int i = 0; i < 3; i++) {
            long price = i;
            store.update(ROOT, (tree, change) -> change.put("i1", Catalogue.product("p", price)));
        }
        var roots = db.getCollection(VersionedStoreConfig.DEFAULT_ROOTS_COLLECTION);
        assertThat(roots.find().first().getInteger("unsettledCount")).as("below the threshold").isEqualTo(4);

        store.update(ROOT, (tree, change) -> change.put("i1", Catalogue.product("p", 9)));

        assertThat(roots.find().first().getInteger("unsettledCount")).isEqualTo(1);
        assertThat(store.metrics().settledVersions()).isEqualTo(4);
        assertThat(store.read(ROOT).item("i1")).contains(Catalogue.product("p", 9));
    }

    @Test
    void shouldPruneToTheLastVersionsAndAnswerPrunedForOlderOnes(MongoDatabase db) {
        ready(db);
        VersionedStore store = Catalogue.store(db).retention(Retention.keepLast(3)).build();
        for (int i = 0; i < 6; i++) {
            long price = i;
            store.update(ROOT, (tree, change) -> {
                change.put("i0", Catalogue.product("p", price));
                if (price == 2) {
                    change.delete("i2");
                }
            });
        }
        Map<Object, Document> v5 = store.readAsOf(ROOT, 5).items();
        Map<Object, Document> current = store.read(ROOT).items();

        long pruned = store.prune();

        assertThat(pruned).isPositive();
        assertThat(store.read(ROOT).items()).isEqualTo(current);
        assertThat(store.readAsOf(ROOT, 5).items()).isEqualTo(v5);
        assertThatThrownBy(() -> store.readAsOf(ROOT, 4)).isInstanceOf(VersionPrunedException.class);
        assertThat(store.versions(ROOT)).extracting(VersionInfo::version).containsExactly(5L, 6L, 7L);
        assertThat(db.getCollection(VersionedStoreConfig.DEFAULT_ITEMS_COLLECTION)
                .countDocuments(Filters.eq("item", "i2"))).isZero();
        assertThat(store.prune()).isZero();
    }

    /**
     * As of a time: the newest version committed at or before it, whether settled (its history record tells its time)
     * or not (the root does), the empty root before the first commit, the current tree after the last, refused once
     * pruned. What each time should answer is worked out from the commit times the store lists, so two commits
     * stamped with the same millisecond are no special case.
     */
    @Test
    void shouldReadTheTreeAsOfATimeAsTheVersionCommittedLastByThen(MongoTarget target, MongoDatabase db) {
        ready(db);
        VersionedStore store = Catalogue.store(db).retention(Retention.keepLast(3)).build();
        for (int i = 0; i < 6; i++) {
            long price = i;
            store.update(ROOT, (tree, change) -> change.put("i0", Catalogue.product("p", price)));
            if (i == 2) {
                assertThat(store.settle()).isPositive();   // the first versions settled, the later ones on the root
            }
        }
        List<VersionInfo> versions = store.versions(ROOT);
        assertThat(versions).extracting(VersionInfo::version).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L);
        java.util.function.Function<java.time.Instant, Long> newestBy = t -> versions.stream()
                .filter(v -> !v.committedAt().orElseThrow().isAfter(t)).mapToLong(VersionInfo::version).max()
                .orElse(0L);

        for (VersionInfo info : versions) {
            java.time.Instant at = info.committedAt().orElseThrow();
            for (java.time.Instant t : List.of(at, at.minusMillis(1))) {
                long expected = newestBy.apply(t);
                VersionedTree tree;
                try (RoundTripCounter counter = RoundTripCounter.attach(target, db.getName())) {
                    tree = store.readAsOf(ROOT, t);
                    assertThat(counter.snapshot().commands()).as("one aggregation").isEqualTo(1);
                }
                VersionedTree byVersion = store.readAsOf(ROOT, expected);
                assertThat(tree.version()).as("as of %s", t).isEqualTo(expected);
                assertThat(tree.items()).as("as of %s", t).isEqualTo(byVersion.items());
                assertThat(tree.committedAt()).as("as of %s", t).isEqualTo(byVersion.committedAt());
            }
        }
        java.time.Instant first = versions.get(0).committedAt().orElseThrow();
        assertThat(store.readAsOf(ROOT, first.minusSeconds(1)).version()).as("before the first commit").isZero();
        assertThat(store.readAsOf(ROOT, first.minusSeconds(1)).items()).isEmpty();
        java.time.Instant last = versions.get(versions.size() - 1).committedAt().orElseThrow();
        assertThat(store.readAsOf(ROOT, last.plus(Duration.ofDays(1))).items()).as("after the last commit")
                .isEqualTo(store.read(ROOT).items());
        assertThatThrownBy(() -> store.readAsOf(ROOT, (java.time.Instant) null))
                .isInstanceOf(dev.consistencykit.core.InvalidInputException.class);

        store.prune();

        java.time.Instant fifth = versions.get(4).committedAt().orElseThrow();
        assertThat(store.readAsOf(ROOT, fifth).version()).isEqualTo(newestBy.apply(fifth));
        assertThatThrownBy(() -> store.readAsOf(ROOT, fifth.minusMillis(1)))
                .as("the version of that time is pruned").isInstanceOf(VersionPrunedException.class);
        assertThatThrownBy(() -> store.readAsOf(ROOT, first.minusSeconds(1)))
                .as("before the first commit, once pruned").isInstanceOf(VersionPrunedException.class);
    }

    @Test
    void shouldPruneVersionsOlderThanTheRetentionAge(MongoDatabase db) {
        ready(db);
        VersionedStore store = Catalogue.store(db).retention(Retention.newerThan(Duration.ofHours(1))).build();
        store.update(ROOT, (tree, change) -> change.put("i0", Catalogue.product("p", 1)));
        var roots = db.getCollection(VersionedStoreConfig.DEFAULT_ROOTS_COLLECTION);
        String seedSlot = roots.find().first().get("unsettled", Document.class).entrySet().stream()
                .filter(e -> ((Document) e.getValue()).getString("cs").equals("seed")).findFirst().orElseThrow().getKey();
        roots.updateOne(Filters.eq("_id", ROOT),
                com.mongodb.client.model.Updates.set("unsettledAt." + seedSlot, new java.util.Date(0)));

        store.prune();

        assertThatThrownBy(() -> store.readAsOf(ROOT, 1)).isInstanceOf(VersionPrunedException.class);
        assertThat(store.readAsOf(ROOT, 2).items()).hasSize(3);
    }

    @Test
    void shouldReportStatusAndMetrics(MongoDatabase db) {
        VersionedStore store = ready(db);
        store.submit(ChangeSet.on(ROOT, 1).put("x", Catalogue.product("X", 1)).build());
        store.commit(ChangeSet.on(ROOT, 1).put("y", Catalogue.product("Y", 1)).build());

        assertThat(store.status().count("staged")).isEqualTo(1);
        assertThat(store.status().count("committed")).isEqualTo(2);
        assertThat(store.status().oldestInFlightAge()).isPresent();
        store.recover(Duration.ZERO);
        assertThat(store.status().countsByState()).containsEntry("staged", 0L).containsEntry("committed", 2L)
                .containsEntry("abandoned", 1L);
        assertThat(store.metrics().staged()).isEqualTo(2);
        assertThat(store.metrics().abandoned()).isEqualTo(1);
        assertThat(store.get(ROOT, "y")).contains(Catalogue.product("Y", 1));
        assertThat(store.get(ROOT, "x")).isEmpty();
    }

    @Test
    void shouldServeEveryQueryFromADeclaredIndex(MongoTarget target, MongoDatabase db) {
        VersionedStore store = ready(db);
        VersionedStore pruning = Catalogue.store(db).retention(Retention.keepLast(2)).settleThreshold(2).build();
        try (IndexCoverage coverage = IndexCoverage.attach(target, db.getName())) {
            store.submit(ChangeSet.on(ROOT, 1).id(OperationId.of("lost")).put("x", Catalogue.product("X", 1)).build());
            pruning.update(ROOT, (tree, change) -> change.put("i0", Catalogue.product("p", 1)).delete("i1"));
            pruning.update(ROOT, (tree, change) -> change.put("i0", Catalogue.product("p", 2)));
            store.apply(ChangeSet.on(ROOT, 1).id(OperationId.of("lost")).put("x", Catalogue.product("X", 1)).build());
            store.read(ROOT);
            store.readAsOf(ROOT, 2);
            store.get(ROOT, "i0");
            store.history(ROOT, "i0");
            store.versions(ROOT);
            store.recover(Duration.ZERO);

            assertThat(coverage.uncovered(db)).isEmpty();
        }
        // status() sums counters over every root and prune() visits every root: whole-collection reads by design
        assertThat(store.status().inFlight()).isZero();
        assertThat(pruning.prune()).isGreaterThanOrEqualTo(0);
    }

    @Test
    void shouldNotSeeItemsOfAnotherRoot(MongoDatabase db) {
        VersionedStore store = ready(db);
        store.createRoot("other");
        store.commit(ChangeSet.on("other", 0).put("i0", Catalogue.product("other", 1)).build());

        assertThat(store.read(ROOT).item("i0")).contains(Catalogue.product("Item 0", 100));
        assertThat(store.read("other").items()).containsOnlyKeys("i0");
        assertThat(store.createRoot("other")).isFalse();
        assertThat(Optional.of(store.read("other").version())).contains(1L);
        assertThat(List.of(Set.of())).hasSize(1);
    }
    /**
     * The tree a root carries follows every commit or goes: a commit whose tree no longer fits removes it (reads then
     * aggregate the item versions), a later one that fits writes it again, and a commit by recovery, which does not
     * know the base tree, removes it too. Every version reads the same both ways throughout.
     */
    @Test
    void shouldCarryTheTreeOnTheRootOnlyWhileItFitsAndItsCommitterKnowsIt(MongoTarget target, MongoDatabase db) {
        VersionedStore store = Catalogue.store(db).inlineTreeBytes(600).build();
        store.ensureIndexes();
        store.createRoot(ROOT);
        var roots = db.getCollection(VersionedStoreConfig.DEFAULT_ROOTS_COLLECTION);
        store.update(ROOT, (tree, change) -> change.put("a", Catalogue.product("A", 1)));
        assertThat(roots.find(Filters.eq("_id", ROOT)).first()).containsKeys("tree", "undo", "prior")
                .containsEntry("treeV", 1L);

        store.update(ROOT, (tree, change) -> change.put("big", new Document("text", "x".repeat(700))));
        assertThat(roots.find(Filters.eq("_id", ROOT)).first()).doesNotContainKeys("tree", "treeV", "undo", "prior");
        long trips;
        try (RoundTripCounter counter = RoundTripCounter.attach(target, db.getName())) {
            assertThat(store.read(ROOT).items()).containsOnlyKeys("a", "big");
            trips = counter.snapshot().commands();
        }
        assertThat(trips).as("the root, then the aggregation").isEqualTo(2);

        store.commit(ChangeSet.on(ROOT, 2).delete("big").build());
        assertThat(roots.find(Filters.eq("_id", ROOT)).first()).as("a stage of a root that carries no tree")
                .doesNotContainKey("tree");
        store.update(ROOT, (tree, change) -> change.put("b", Catalogue.product("B", 2)));
        assertThat(roots.find(Filters.eq("_id", ROOT)).first()).containsEntry("treeV", 4L);
        store.commit(ChangeSet.on(ROOT, 4).put("c", Catalogue.product("C", 3)).build());
        assertThat(roots.find(Filters.eq("_id", ROOT)).first()).as("a stage returns the tree it commits on from")
                .containsEntry("treeV", 5L);
        assertThat(Catalogue.carriedProblems(db, store, 0, 5)).isEmpty();

        store.submit(ChangeSet.on(ROOT, 5).put("d", Catalogue.product("D", 4)).build());
        assertThat(store.recover(Duration.ZERO).rolledForward()).isEqualTo(1);
        assertThat(roots.find(Filters.eq("_id", ROOT)).first()).doesNotContainKeys("tree", "treeV", "undo", "prior");
        assertThat(store.read(ROOT).items()).containsOnlyKeys("a", "b", "c", "d");
        assertThat(Catalogue.carriedProblems(db, store, 0, 6)).isEmpty();
    }
    /**
     * A version has one commit time however it is read: as the current version, as the one before it, from the item
     * versions once newer ones exist, in the list of versions, and placed by a read as of that time; before and after
     * settling. Each commit's compare-and-set stamps one time (a server may stamp two fields of one update a
     * millisecond apart), and the next commit copies it to the version's entry.
     */
    @Test
    void shouldGiveEachVersionOneCommitTimeHoweverItIsRead(MongoDatabase db) {
        VersionedStore store = Catalogue.store(db).build();
        VersionedStore aggregated = Catalogue.store(db).inlineTreeBytes(0).build();
        store.ensureIndexes();
        store.createRoot(ROOT);
        Map<Long, java.time.Instant> seen = new java.util.TreeMap<>();
        for (int i = 0; i < 150; i++) {
            int n = i;
            if (i % 3 == 0) {
                store.commit(ChangeSet.on(ROOT, i).put("i" + (n % 4), Catalogue.product("P", n)).build());
            } else {
                store.update(ROOT, (tree, change) -> change.put("i" + (n % 4), Catalogue.product("P", n)));
            }
            VersionedTree current = store.read(ROOT);
            seen.put(current.version(), current.committedAt().orElseThrow());
            if (i % 50 == 49) {
                store.recover(Duration.ZERO);   // settles: the times go to the history records
            }
        }
        store.update(ROOT, (tree, change) -> change.put("last", Catalogue.product("L", 0)));
        seen.put(151L, store.read(ROOT).committedAt().orElseThrow());
        for (int settled = 0; settled < 2; settled++) {
            Map<Long, java.time.Instant> listed = new java.util.TreeMap<>();
            store.versions(ROOT).forEach(info -> listed.put(info.version(), info.committedAt().orElseThrow()));
            assertThat(listed).isEqualTo(seen);
            seen.forEach((version, at) -> {
                assertThat(store.readAsOf(ROOT, version).committedAt()).as("version %d", version).contains(at);
                assertThat(aggregated.readAsOf(ROOT, version).committedAt()).as("version %d", version).contains(at);
                VersionedTree byTime = aggregated.readAsOf(ROOT, at);
                assertThat(byTime.committedAt()).as("as of the time of version %d", version).contains(at);
                assertThat(byTime.version()).as("as of the time of version %d", version).isGreaterThanOrEqualTo(version);
            });
            store.recover(Duration.ZERO);
        }
        assertThat(db.getCollection(VersionedStoreConfig.DEFAULT_ROOTS_COLLECTION).find(Filters.eq("_id", ROOT))
                .first().get("unsettledAt", Document.class)).as("no time left without its version").isEmpty();
    }
}
