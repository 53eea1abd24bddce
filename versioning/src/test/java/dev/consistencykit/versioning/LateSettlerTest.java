package dev.consistencykit.versioning;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;

import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * A settler that read a root's unsettled versions, then slept while another process settled and pruned them, writes
 * their version records again when it wakes: records below the floor, which pruning deleted. It has the next prune
 * pass delete them, and a pruner that was itself between its deletes and its mark of the root when the settler woke
 * does not cover them with its mark. Nothing pruning deletes stays below the floor.
 */
@ExtendWith(MongoTestExtension.class)
class LateSettlerTest {

    private static final String ROOT = Catalogue.ROOT;

    private static VersionedStore store(MongoDatabase db) {
        return Catalogue.store(db).retention(Retention.keepLast(1)).build();
    }

    @Test
    void shouldDeleteTheRecordsALateSettlerWroteBelowTheFloorEvenWhileAPrunerMarksTheRoot(MongoDatabase db)
            throws Exception {
        Catalogue.seed(db, Catalogue.products(2));
        for (long v = 1; v <= 2; v++) {
            store(db).commit(ChangeSet.on(ROOT, v).put("i0", Catalogue.product("v" + (v + 1), v)).build());
        }
        // the settler pauses before it writes the version records of what it read
        FaultInjector settlerFaults = FaultInjector.withSchedule(site -> Optional.of(FaultMode.PAUSE)
                .filter(m -> "bulkWrite".equals(site.method())
                        && VersionedStoreConfig.DEFAULT_HISTORY_COLLECTION.equals(site.collection())));
        CompletableFuture<Long> settler = CompletableFuture.supplyAsync(() -> store(settlerFaults.wrap(db)).settle());
        assertThat(settlerFaults.awaitPaused(Duration.ofSeconds(10))).isTrue();
        // a pruner settles, prunes to version 3, and pauses before it marks the root pruned
        AtomicBoolean deletedRecords = new AtomicBoolean();
        FaultInjector prunerFaults = FaultInjector.withSchedule(site -> {
            if ("deleteMany".equals(site.method())
                    && VersionedStoreConfig.DEFAULT_HISTORY_COLLECTION.equals(site.collection())) {
                deletedRecords.set(true);
                return Optional.empty();
            }
            return Optional.of(FaultMode.PAUSE).filter(m -> deletedRecords.get()
                    && VersionedStoreConfig.DEFAULT_ROOTS_COLLECTION.equals(site.collection()));
        });
        CompletableFuture<Long> pruner = CompletableFuture.supplyAsync(() -> store(prunerFaults.wrap(db)).prune());
        assertThat(prunerFaults.awaitPaused(Duration.ofSeconds(10))).isTrue();
        assertThat(records(db, 3)).as("the pruner deleted the records below the floor").isZero();

        // the settler wakes: it writes the records of versions 1 to 3 again, finds them settled, and says so
        settlerFaults.release();
        settler.get(30, TimeUnit.SECONDS);
        assertThat(records(db, 3)).as("records the late settler wrote below the floor").isPositive();
        prunerFaults.release();
        pruner.get(30, TimeUnit.SECONDS);

        store(db).prune();
        assertThat(records(db, 3)).isZero();
        assertThat(Catalogue.invariants(db, null)).isEmpty();
        assertThat(store(db).read(ROOT).item("i0")).contains(Catalogue.product("v3", 2));
    }

    private static long records(MongoDatabase db, long floor) {
        return db.getCollection(VersionedStoreConfig.DEFAULT_HISTORY_COLLECTION)
                .countDocuments(Filters.and(Filters.eq("root", ROOT), Filters.lt("v", floor)));
    }
}
