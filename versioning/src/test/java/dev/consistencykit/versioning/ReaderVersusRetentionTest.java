package dev.consistencykit.versioning;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * A reader that asked for version 1 (or the current version, then 1) and is delayed before its read reaches the server,
 * while version 2 is committed and retention ({@code keepLast(1)}) settles and prunes version 1: it must never return
 * version 1 as a tree that was never a version (only the items that version 2 did not replace). The read is one
 * aggregation (the root, the item versions, the floor again): a prune between its stages on the server is held by
 * the floor read last, which {@code ReadAggregationOrderTest} checks on every server. The store here reads item
 * versions alone ({@code inlineTreeBytes(0)}), as every store reads a root that carries no tree: a root's own tree is
 * one document, which no prune can split.
 */
@ExtendWith(MongoTestExtension.class)
class ReaderVersusRetentionTest {

    private static final String ROOT = Catalogue.ROOT;

    /** Pauses the first read of a tree (an aggregation on the roots) sent by the thread that arms it. */
    private static final class PauseBeforeItems implements CommandListener {
        private final CountDownLatch paused = new CountDownLatch(1);
        private final CountDownLatch release = new CountDownLatch(1);
        private volatile Thread armed;

        @Override
        public void commandStarted(CommandStartedEvent event) {
            if (Thread.currentThread() == armed && "aggregate".equals(event.getCommandName())
                    && VersionedStoreConfig.DEFAULT_ROOTS_COLLECTION.equals(event.getCommand().getString("aggregate")
                    .getValue())) {
                armed = null;
                paused.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    private <T> T readWhileVersionTwoIsCommittedAndVersionOnePruned(MongoTarget target, MongoDatabase db,
                                                                     Function<VersionedStore, T> read)
            throws Exception {
        Catalogue.seed(db, Map.of("x", Catalogue.product("X", 1), "y", Catalogue.product("Y", 1)));
        VersionedStore store = Catalogue.store(db).retention(Retention.keepLast(1)).inlineTreeBytes(0).build();
        PauseBeforeItems pause = new PauseBeforeItems();
        target.commandListeners().add(pause);
        try {
            CompletableFuture<T> reader = CompletableFuture.supplyAsync(() -> {
                pause.armed = Thread.currentThread();
                return read.apply(store);
            });
            assertThat(pause.paused.await(10, TimeUnit.SECONDS)).as("the reader sent its read").isTrue();
            store.commit(ChangeSet.on(ROOT, 1).put("x", Catalogue.product("X", 2)).build());
            store.recover(Duration.ZERO);
            assertThat(store.versions(ROOT)).extracting(VersionInfo::version).containsExactly(2L);
            pause.release.countDown();
            return reader.get(30, TimeUnit.SECONDS);
        } finally {
            target.commandListeners().remove(pause);
        }
    }

    @Test
    void shouldReadTheWholeNewerTreeWhenRetentionPrunesTheVersionBeingRead(MongoTarget target, MongoDatabase db)
            throws Exception {
        VersionedTree tree = readWhileVersionTwoIsCommittedAndVersionOnePruned(target, db, s -> s.read(ROOT));

        assertThat(tree.version()).isEqualTo(2);
        assertThat(tree.items()).containsOnlyKeys("x", "y");
        assertThat(tree.item("x")).contains(Catalogue.product("X", 2));
    }

    @Test
    void shouldFindTheItemWhenRetentionPrunesTheVersionBeingRead(MongoTarget target, MongoDatabase db)
            throws Exception {
        Optional<Document> x = readWhileVersionTwoIsCommittedAndVersionOnePruned(target, db, s -> s.get(ROOT, "x"));

        assertThat(x).contains(Catalogue.product("X", 2));
    }

    @Test
    void shouldRefuseRatherThanAnswerPartiallyWhenReadAsOfTheVersionBeingPruned(MongoTarget target, MongoDatabase db)
            throws Exception {
        Object result = readWhileVersionTwoIsCommittedAndVersionOnePruned(target, db, s -> {
            try {
                return s.readAsOf(ROOT, 1);
            } catch (VersionPrunedException pruned) {
                return pruned;
            }
        });

        assertThat(result).isInstanceOf(VersionPrunedException.class);
    }
}
