package dev.consistencykit.logreconciliation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.OutcomeUnknownException;
import dev.consistencykit.core.ServerUnavailableException;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * Twelve processes append to the same two accounts at once, round after round, with no fault injected: each append
 * lands once, takes its own numbers, and is answered, never with an unknown outcome. On the real engine inserts that
 * took the same number wait for each other's transaction and deadlock now and then (the unique sequence key is an
 * exclusion constraint there), and committers meet on the same caches; each such refusal is retried until the call's
 * deadline. Learned by query, a number is a race that twelve writers on one account can lose for a whole deadline
 * there: that append is refused, typed, with nothing appended ({@link ServerUnavailableException}), or, when the
 * deadline runs out while an insert waits, ends in {@link OutcomeUnknownException}; either way its caller applies it
 * again with the same id, as a caller would (the invariants then hold on the books). Numbered from the counter, no
 * append is refused or runs out of time.
 */
@ExtendWith(MongoTestExtension.class)
class ContentionTest {

    private static final int THREADS = 12;
    private static final int ROUNDS = 10;

    @ParameterizedTest
    @EnumSource(SeqAllocation.class)
    void shouldAppendAndCommitEveryTransferOfTwelveProcessesOnTheSameAccounts(SeqAllocation allocation,
                                                                             MongoDatabase db) throws Exception {
        Books.seed(db, Books.accounts(2, 1_000_000));
        Books.ledger(db).seqAllocation(allocation).build().ensureIndexes();
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        AtomicInteger refused = new AtomicInteger();
        AtomicInteger unknown = new AtomicInteger();
        try {
            for (int round = 0; round < ROUNDS; round++) {
                CountDownLatch start = new CountDownLatch(1);
                List<Future<OperationResult>> calls = new ArrayList<>();
                for (int i = 0; i < THREADS; i++) {
                    OperationId id = OperationId.of("r" + round + "-" + i);
                    boolean forth = i % 2 == 0;
                    Callable<OperationResult> apply = () -> {
                        start.await();
                        Ledger ledger = Books.ledger(db).seqAllocation(allocation).build();
                        LedgerTransaction transfer = LedgerTransaction.transfer(forth ? "a0" : "a1",
                                forth ? "a1" : "a0", 1).withId(id);
                        while (true) {
                            try {
                                return ledger.apply(transfer);
                            } catch (ServerUnavailableException tooContended) {
                                refused.incrementAndGet();   // nothing appended: applied again, as a caller would
                            } catch (OutcomeUnknownException outOfTime) {
                                // learned by query, the deadline can run out while an insert waits for the one
                                // holding its number: applied again with the same id, as the exception says
                                unknown.incrementAndGet();
                            }
                        }
                    };
                    calls.add(pool.submit(apply));
                }
                start.countDown();
                for (Future<OperationResult> call : calls) {
                    assertThat(call.get(2, TimeUnit.MINUTES).outcome()).as("round %d", round)
                            .isEqualTo(OperationResult.Outcome.COMMITTED);
                }
            }
        } finally {
            pool.shutdownNow();
        }
        Books.recoverAll(Books.ledger(db).seqAllocation(allocation).build());
        System.out.println("ledger contention, " + allocation + ": " + refused.get() + " appends refused as too"
                + " contended and " + unknown.get() + " out of time, each applied again");
        if (allocation == SeqAllocation.COUNTER) {
            assertThat(refused.get()).as("appends refused with COUNTER").isZero();
            assertThat(unknown.get()).as("appends out of time with COUNTER").isZero();
        }

        assertThat(Books.invariants(db, Books.accounts(2, 1_000_000), true, 0L)).isEmpty();
        assertThat(db.getCollection(LedgerConfig.DEFAULT_LEDGER_COLLECTION).countDocuments(
                com.mongodb.client.model.Filters.regex("_id", "^r"))).isEqualTo((long) THREADS * ROUNDS);
    }
}
