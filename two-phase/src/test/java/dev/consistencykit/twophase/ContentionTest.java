package dev.consistencykit.twophase;

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
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * Twelve processes record and drive the same transfer id at once, round after round, with no fault injected: one
 * record, one debit, and every caller answered committed or in flight (another process drives it) — never with an
 * unknown outcome, which a deadlock between the recording upserts (the real engine's way to refuse one of two inserts
 * of one _id) was reported as before.
 */
@ExtendWith(MongoTestExtension.class)
class ContentionTest {

    private static final int THREADS = 12;
    private static final int ROUNDS = 10;

    @Test
    void shouldRecordOneTransactionAndMoveTheMoneyOnceWhenTwelveProcessesApplyItsIdAtOnce(MongoDatabase db)
            throws Exception {
        Bank.seed(db, Bank.accounts(2, 1_000));
        TwoPhaseCommit.builder(db).retryPolicy(TestPolicies.FAST_RETRY).build().ensureIndexes();
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            for (int round = 0; round < ROUNDS; round++) {
                Transfer transfer = Transfer.of(OperationId.of("t" + round), "a0", "a1", 10);
                CountDownLatch start = new CountDownLatch(1);
                List<Future<OperationResult>> calls = new ArrayList<>();
                for (int i = 0; i < THREADS; i++) {
                    calls.add(pool.submit(() -> {
                        start.await();
                        return TwoPhaseCommit.builder(db).retryPolicy(TestPolicies.FAST_RETRY).build()
                                .transfer(transfer);
                    }));
                }
                start.countDown();
                for (Future<OperationResult> call : calls) {
                    assertThat(call.get(2, TimeUnit.MINUTES).outcome()).as("round %d", round)
                            .isIn(OperationResult.Outcome.COMMITTED, OperationResult.Outcome.IN_FLIGHT);
                }
            }
        } finally {
            pool.shutdownNow();
        }
        TwoPhaseCommit.builder(db).retryPolicy(TestPolicies.FAST_RETRY).build().recover(java.time.Duration.ZERO);

        assertThat(db.getCollection(Bank.TRANSACTIONS).countDocuments()).isEqualTo(ROUNDS);
        assertThat(Bank.balance(db, "a0")).isEqualTo(1_000L - 10L * ROUNDS);
        assertThat(Bank.invariants(db, Bank.accounts(2, 1_000), true)).isEmpty();
    }
}
