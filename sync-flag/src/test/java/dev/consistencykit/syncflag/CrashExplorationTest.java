package dev.consistencykit.syncflag;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** A rename propagated to two targets, crashed at every write; then the sweeper in a fresh instance. */
@ExtendWith(MongoTestExtension.class)
class CrashExplorationTest {

    static CrashPointExplorer.Builder rename(MongoClient client) {
        return CrashPointExplorer.builder(client)
                .name("rename")
                .workload(RenameWorkload.renames(3, 2)
                        .operation((db, random) -> Blog.sync(db).build().apply(new MasterUpdate(
                                OperationId.of("op-1"), "u0", Updates.set("name", "Ann Smith"))))
                        .endingNamed("u0", Set.of("User 0", "Ann Smith")));
    }

    @Test
    void shouldBringEveryCopyInStepWhenARenameCrashesAtAnyWrite(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = rename(client).recoveryFaults(true).build().explore();

        assertThat(report.sites()).extracting(s -> s.method() + " " + s.collection()).containsExactly(
                "findOneAndUpdate users", "updateMany comments", "updateMany posts", "updateOne users");
        assertThat(report.scenarios()).isGreaterThanOrEqualTo(1 + 4 * FaultMode.values().length * 2);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    /** Two renames of the same master race in one process that crashes at each write; the copies follow the winner. */
    @Test
    void shouldEndWithTheMastersFinalValueWhenTwoRenamesRaceAndCrash(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client)
                .name("two-renames")
                .workload(RenameWorkload.renames(3, 2).operation((db, random) -> twoRenames(db))
                        .endingNamed("u0", Set.of("User 0", "Ann A", "Ann B")))
                .build().explore();

        assertThat(report.writeSites()).isEqualTo(8);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    private static void twoRenames(MongoDatabase db) {
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            List<Future<?>> renames = new ArrayList<>();
            for (String name : List.of("Ann A", "Ann B")) {
                renames.add(threads.submit(() -> Blog.sync(db).build().apply(
                        new MasterUpdate(OperationId.of("op-" + name), "u0", Updates.set("name", name)))));
            }
            // a process dies whole: wait for both threads before reporting the crash, so that no write of this
            // process can land after the operation has returned and recovery has begun
            Throwable first = null;
            for (Future<?> rename : renames) {
                try {
                    rethrowingGet(rename);
                } catch (Error | RuntimeException e) {
                    first = first == null ? e : first;
                }
            }
            if (first instanceof Error error) {
                throw error;
            }
            if (first instanceof RuntimeException runtime) {
                throw runtime;
            }
        } finally {
            threads.shutdownNow();
        }
    }

    /** Waits for {@code future}; an injected crash in it crashes this thread too, as one process. */
    private static void rethrowingGet(Future<?> future) {
        try {
            future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(e.getCause());
        }
    }
}
