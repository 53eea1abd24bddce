package dev.consistencykit.versioning;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;

import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.InjectedCrash;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * Writer A crashes after writing items X and Y at its version; writer B then commits a change to Z on the same base.
 * No reader may ever see A's X or Y. The same scenario against the naive scheme must expose them: that is what shows
 * this test can fail.
 */
@ExtendWith(MongoTestExtension.class)
class AbandonedWriterTest {

    private static final String ROOT = Catalogue.ROOT;
    private static final Document A_X = Catalogue.product("A's X", 1);
    private static final Document A_Y = Catalogue.product("A's Y", 2);
    private static final Document B_Z = Catalogue.product("B's Z", 3);

    @Test
    void shouldNeverShowACrashedWritersItemsAfterAnotherWriterCommits(MongoDatabase db) {
        Catalogue.seed(db, Map.of("z", Catalogue.product("old Z", 0)));
        VersionedStore reader = Catalogue.store(db).build();
        // writer A: stage, write X and Y, then the process dies before its commit (write #3)
        VersionedStore writerA = Catalogue.store(FaultInjector.atWrite("updateOne", "versionRoots", 1,
                FaultMode.CRASH_BEFORE).wrap(db)).build();
        assertThatThrownBy(() -> writerA.commit(ChangeSet.on(ROOT, 1).put("x", A_X).put("y", A_Y).build()))
                .isInstanceOf(InjectedCrash.class);
        assertThat(db.getCollection(VersionedStoreConfig.DEFAULT_ITEMS_COLLECTION)
                .countDocuments(Filters.in("item", "x", "y"))).as("A's documents stay behind").isEqualTo(2);
        assertThat(reader.read(ROOT).items()).containsOnlyKeys("z");

        // writer B commits a change to Z on the same base: the root moves to the number A wrote at
        Catalogue.store(db).build().commit(ChangeSet.on(ROOT, 1).put("z", B_Z).build());

        VersionedTree afterB = reader.read(ROOT);
        assertThat(afterB.version()).isEqualTo(2);
        assertThat(afterB.items()).isEqualTo(Map.of("z", B_Z));
        assertThat(reader.get(ROOT, "x")).isEmpty();
        assertThat(reader.history(ROOT, "y")).isEmpty();
        assertThat(reader.readAsOf(ROOT, 2).items()).isEqualTo(Map.of("z", B_Z));

        // a later commit moves the root further past A's number: still nothing of A
        reader.commit(ChangeSet.on(ROOT, 2).put("w", Catalogue.product("W", 4)).build());
        assertThat(reader.read(ROOT).items()).containsOnlyKeys("z", "w");
        reader.settle();
        assertThat(reader.read(ROOT).items()).containsOnlyKeys("z", "w");

        // recovery abandons A and deletes its documents
        var report = Catalogue.store(db).build().recover(Duration.ZERO);
        assertThat(report.rolledBack()).isEqualTo(1);
        assertThat(db.getCollection(VersionedStoreConfig.DEFAULT_ITEMS_COLLECTION)
                .countDocuments(Filters.in("item", "x", "y"))).isZero();
        assertThat(reader.read(ROOT).items()).containsOnlyKeys("z", "w");
    }

    @Test
    void shouldExposeTheCrashedWritersItemsUnderTheNaiveScheme(MongoDatabase db) {
        NaiveVersionedStore naive = new NaiveVersionedStore(db);
        naive.createRoot(ROOT);
        naive.write(ROOT, 0, Map.of("z", Catalogue.product("old Z", 0)), true);
        naive.write(ROOT, 1, Map.of("x", A_X, "y", A_Y), false);   // A: written, never committed
        assertThat(naive.read(ROOT)).containsOnlyKeys("z");

        assertThat(naive.write(ROOT, 1, Map.of("z", B_Z), true)).as("B commits").isTrue();

        // the naive reader now shows A's abandoned X and Y: exactly what the test above rules out
        assertThat(naive.read(ROOT)).containsEntry("x", A_X).containsEntry("y", A_Y).containsEntry("z", B_Z);
    }

    @Test
    void shouldNeverShowItemsOfAWriterThatLostTheCompareAndSet(MongoDatabase db) {
        Catalogue.seed(db, Map.of("z", Catalogue.product("old Z", 0)));
        VersionedStore store = Catalogue.store(db).build();
        // A stages and writes X, Y; B commits first; A's commit then loses
        ChangeSet a = ChangeSet.on(ROOT, 1).put("x", A_X).put("y", A_Y).build();
        store.submit(a);
        store.commit(ChangeSet.on(ROOT, 1).put("z", B_Z).build());
        assertThat(store.read(ROOT).items()).isEqualTo(Map.of("z", B_Z));

        assertThatThrownBy(() -> store.commit(a)).isInstanceOf(VersionConflictException.class);

        assertThat(store.read(ROOT).items()).isEqualTo(Map.of("z", B_Z));
        assertThat(db.getCollection(VersionedStoreConfig.DEFAULT_ITEMS_COLLECTION)
                .countDocuments(Filters.in("item", "x", "y"))).as("the loser deletes its own documents").isZero();
    }

    @Test
    void shouldNeverLetAPausedWriterCommitAfterRecoveryAbandonedIt(MongoDatabase db) throws Exception {
        Catalogue.seed(db, Map.of("z", Catalogue.product("old Z", 0)));
        VersionedStore reader = Catalogue.store(db).build();
        // writer A pauses before writing its items (write #2); recovery abandons it (nothing written yet)
        FaultInjector pause = FaultInjector.atWrite("insertMany", "versionItems", 1, FaultMode.PAUSE);
        VersionedStore writerA = Catalogue.store(pause.wrap(db)).build();
        var futureA = Executors.newSingleThreadExecutor().submit(
                () -> writerA.commit(ChangeSet.on(ROOT, 1).put("x", A_X).put("y", A_Y).build()));
        assertThat(pause.awaitPaused(Duration.ofSeconds(10))).isTrue();
        assertThat(Catalogue.store(db).build().recover(Duration.ZERO).rolledBack()).isEqualTo(1);

        pause.release();   // A wakes up, writes X and Y, tries to commit

        assertThatThrownBy(futureA::get).hasCauseInstanceOf(ChangeSetAbandonedException.class);
        assertThat(reader.read(ROOT).items()).containsOnlyKeys("z");
        assertThat(reader.read(ROOT).version()).isEqualTo(1);
        reader.commit(ChangeSet.on(ROOT, 1).put("w", Catalogue.product("W", 4)).build());
        assertThat(reader.read(ROOT).items()).containsOnlyKeys("z", "w");
        assertThat(reader.cleanup()).as("A's late documents are deleted").isEqualTo(2);
    }
    /**
     * The stage of writer A is applied but its reply lost; before A retries it, recovery abandons the attempt and is
     * about to delete its documents. A's retry must not bring the abandoned attempt back: otherwise A writes and
     * commits it, and recovery's delete then removes documents of a committed version.
     */
    @Test
    void shouldNeverReviveAnAbandonedAttemptWhenAStageIsRetried(MongoDatabase db) throws Exception {
        Catalogue.seed(db, Map.of("z", Catalogue.product("old Z", 0)));
        VersionedStore reader = Catalogue.store(db).build();
        // A: the stage (#1) is applied, and A is held before it sees the reply, which is then lost
        FaultInjector writerFaults = FaultInjector.atWrite("findOneAndUpdate", "versionRoots", 1,
                FaultMode.PAUSE_AFTER);
        VersionedStore writerA = Catalogue.store(writerFaults.wrap(db)).build();
        var pool = Executors.newFixedThreadPool(2);
        try {
            var futureA = pool.submit(() -> writerA.commit(
                    ChangeSet.on(ROOT, 1).put("x", A_X).put("y", A_Y).build()));
            assertThat(writerFaults.awaitPaused(Duration.ofSeconds(10))).isTrue();
            // recovery abandons A (#1) and pauses before deleting its documents (#2)
            FaultInjector recovererFaults = FaultInjector.atWrite("deleteMany", "versionItems", 1, FaultMode.PAUSE);
            VersionedStore recoverer = Catalogue.store(recovererFaults.wrap(db)).build();
            var recovery = pool.submit(() -> recoverer.recover(Duration.ZERO));
            assertThat(recovererFaults.awaitPaused(Duration.ofSeconds(10))).isTrue();

            writerFaults.release();   // A retries its stage, writes X and Y, commits
            Object outcome;
            try {
                outcome = futureA.get(10, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                outcome = e.getCause();
            }
            recovererFaults.release();   // recovery deletes the documents of the attempt it abandoned
            recovery.get(10, TimeUnit.SECONDS);

            VersionedTree tree = reader.read(ROOT);
            if (tree.version() == 2) {
                assertThat(tree.items()).as("A committed (%s): all of it is readable", outcome)
                        .containsOnlyKeys("x", "y", "z");
            } else {
                assertThat(tree.items()).as("A did not commit (%s)", outcome).containsOnlyKeys("z");
            }
            assertThat(Catalogue.invariants(db, null)).isEmpty();
        } finally {
            pool.shutdownNow();
        }
    }
}
