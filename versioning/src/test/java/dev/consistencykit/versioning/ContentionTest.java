package dev.consistencykit.versioning;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * Twelve processes commit on one root from the same base at once, round after round, with no fault injected: exactly
 * one change set per round commits, every other caller is refused as a conflict (typed, nothing written) or, for
 * the winner's own id, answered with its commit — never an unknown outcome. Half of each round's callers commit the
 * same change set id (a client retrying), half change sets of their own.
 */
@ExtendWith(MongoTestExtension.class)
class ContentionTest {

    private static final int THREADS = 12;
    private static final int ROUNDS = 10;

    @Test
    void shouldCommitOneChangeSetPerBaseWhenTwelveProcessesCommitOnOneRootAtOnce(MongoDatabase db) throws Exception {
        Catalogue.seed(db, Catalogue.products(3));
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            for (int round = 0; round < ROUNDS; round++) {
                long base = 1L + round;
                CountDownLatch start = new CountDownLatch(1);
                List<Future<String>> calls = new ArrayList<>();
                for (int i = 0; i < THREADS; i++) {
                    OperationId id = OperationId.of(i % 2 == 0 ? "shared-" + round : "own-" + round + "-" + i);
                    ChangeSet change = ChangeSet.on(Catalogue.ROOT, base).id(id)
                            .put("i0", Catalogue.product("round " + round, base)).build();
                    calls.add(pool.submit(() -> {
                        start.await();
                        try {
                            return "committed " + Catalogue.store(db).build().commit(change).version();
                        } catch (VersionConflictException e) {
                            return "conflict";
                        }
                    }));
                }
                start.countDown();
                List<String> outcomes = new ArrayList<>();
                for (Future<String> call : calls) {
                    outcomes.add(call.get(2, TimeUnit.MINUTES));
                }
                assertThat(outcomes).as("round %d", round).contains("committed " + (base + 1))
                        .allMatch(o -> o.equals("conflict") || o.equals("committed " + (base + 1)));
            }
        } finally {
            pool.shutdownNow();
        }
        Catalogue.store(db).build().recover(java.time.Duration.ZERO);

        assertThat(Catalogue.store(db).build().read(Catalogue.ROOT).version()).isEqualTo(1L + ROUNDS);
        assertThat(Catalogue.invariants(db, null)).isEmpty();
    }
}
