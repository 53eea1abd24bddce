package dev.consistencykit.twophase;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.testkit.AfterCommand;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.IndexCoverage;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** Workers, status, pruning, settled reads, listener and metrics, and the indexes the queries need. */
@ExtendWith(MongoTestExtension.class)
class OperationsTest {

    private static final Map<String, Long> ACCOUNTS = Bank.accounts(6, 10_000);

    private static TwoPhaseCommit tpc(MongoDatabase db) {
        return TwoPhaseCommit.builder(db).retryPolicy(TestPolicies.FAST_RETRY).build();
    }

    @Test
    void shouldRunEverySubmittedTransactionOnceWhenWorkersDrainTheQueue(MongoDatabase db) throws Exception {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit submitter = tpc(db);
        for (int i = 0; i < 120; i++) {
            submitter.submitTransfer(Transfer.of(OperationId.of("t" + i), "a" + (i % 6), "a" + ((i + 1) % 6), 1 + i));
        }
        assertThat(submitter.status().count("initial")).isEqualTo(120);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<OperationResult> results = new CopyOnWriteArrayList<>();
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                TwoPhaseCommit worker = tpc(db);
                workers.add(pool.submit(() -> {
                    Optional<OperationResult> r;
                    while ((r = worker.processNext()).isPresent()) {
                        results.add(r.get());
                    }
                }));
            }
            for (Future<?> f : workers) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }

        assertThat(results).hasSize(120).allSatisfy(r -> assertThat(r.isCommitted()).isTrue());
        assertThat(results).extracting(OperationResult::id).doesNotHaveDuplicates();
        assertThat(submitter.status().count("done")).isEqualTo(120);
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
    }

    @Test
    void shouldReturnNothingWhenNoTransactionIsWaiting(MongoDatabase db) {
        assertThat(tpc(db).processNext()).isEmpty();
    }

    @Test
    void shouldCountEveryTransactionOnceWhenOneFinishesWhileTheStatusIsRead(MongoTarget target, MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit tpc = tpc(db);
        for (int i = 0; i < 4; i++) {
            tpc.submitTransfer(Transfer.of(OperationId.of("t" + i), "a0", "a1", 1));
        }
        TwoPhaseCommit worker = tpc(db);

        StrategyStatus status;
        try (AfterCommand finish = AfterCommand.once(target, db.getName(), worker::processNext)) {
            status = tpc.status();
            assertThat(finish.ran()).isTrue();
        }

        assertThat(status.total()).as("a snapshot: %s", status.countsByState()).isEqualTo(4);
        assertThat(status.count("initial") + status.count("done")).isEqualTo(4);
        assertThat(status.inFlight()).isEqualTo(status.count("initial"));
        assertThat(tpc.status().countsByState()).containsEntry("initial", 3L).containsEntry("done", 1L);
    }

    @Test
    void shouldRecoverEveryStaleTransactionWhateverHowManyItReadsAtATime(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit tpc = TwoPhaseCommit.builder(db).retryPolicy(TestPolicies.FAST_RETRY).recoveryBatch(2).build();
        for (int i = 0; i < 5; i++) {
            tpc.submitTransfer(Transfer.of(OperationId.of("t" + i), "a0", "a1", 1));
        }

        assertThat(tpc.recover(Duration.ZERO).repaired()).isEqualTo(5);
        assertThat(tpc.status().countsByState()).containsOnlyKeys("done");
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
    }

    @Test
    void shouldDriveTheTransactionItClaimedWhenTheClaimsReplyWasLost(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        tpc(db).submitTransfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 5));
        FaultInjector lost = FaultInjector.atWrite("findOneAndUpdate", Bank.TRANSACTIONS, 1, FaultMode.TRANSIENT_AFTER);

        Optional<OperationResult> ran = tpc(lost.wrap(db)).processNext();

        assertThat(ran).as("the retry found its own claim").hasValueSatisfying(r -> assertThat(r.isCommitted())
                .isTrue());
        assertThat(db.getCollection(Bank.TRANSACTIONS).find(eq("_id", "t1")).first().getString("state"))
                .isEqualTo("done");
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
    }

    @Test
    void shouldReportCountsAndOldestInFlightAgeFromTheData(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit tpc = tpc(db);
        tpc.transfer(Transfer.of(OperationId.of("done-1"), "a0", "a1", 5));
        tpc.submitTransfer(Transfer.of(OperationId.of("waiting"), "a0", "a1", 5));
        FaultInjector crash = FaultInjector.atWrite("bulkWrite", "accounts", 3, FaultMode.CRASH_BEFORE);
        try {
            tpc(crash.wrap(db)).transfer(Transfer.of(OperationId.of("half"), "a2", "a3", 5));
        } catch (Error expected) {
            // the process died after deciding
        }

        StrategyStatus status = tpc.status();

        assertThat(status.countsByState()).containsEntry("done", 1L).containsEntry("initial", 1L)
                .containsEntry("applied", 1L);
        assertThat(status.inFlight()).isEqualTo(2);
        assertThat(status.oldestInFlightAge()).get().satisfies(age -> assertThat(age).isLessThan(Duration.ofMinutes(1)));
    }

    @Test
    void shouldPruneOnlyTerminalTransactionsOlderThanRetention(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit payments = tpc(db);
        payments.transfer(Transfer.of(OperationId.of("old"), "a0", "a1", 5));
        payments.submitTransfer(Transfer.of(OperationId.of("waiting"), "a0", "a1", 5));
        payments.recover(Duration.ofDays(1));   // its maintenance releases what it recorded (RecordReleases)
        // a process whose clock is two days ahead sees "old" as past a one-day retention
        TwoPhaseCommit future = TwoPhaseCommit.builder(db).retention(Duration.ofDays(1))
                .serverClock(dev.consistencykit.core.ServerClock.unsynchronized(
                        Clock.offset(Clock.systemUTC(), Duration.ofDays(2))))
                .build();
        TwoPhaseCommit now = TwoPhaseCommit.builder(db).retention(Duration.ofDays(1)).build();

        assertThat(now.prune()).as("nothing is a day old yet").isZero();
        assertThat(future.prune()).isEqualTo(1);

        assertThat(db.getCollection(Bank.TRANSACTIONS).find(eq("_id", "old")).first()).isNull();
        assertThat(db.getCollection(Bank.TRANSACTIONS).find(eq("_id", "waiting")).first()).isNotNull();
        assertThat(future.metrics().pruned()).isEqualTo(1);
    }

    @Test
    void shouldReadSettledDocumentsInTwoRoundTripsWhenNothingIsInFlight(MongoTarget target, MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit tpc = tpc(db);
        tpc.transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 5));

        try (var counter = dev.consistencykit.testkit.RoundTripCounter.attach(target, db.getName())) {
            SettledRead read = tpc.readSettled(Bank.ACCOUNTS, List.of("a1", "a0"), Duration.ofSeconds(1));

            assertThat(read.isSettled()).isTrue();
            assertThat(read.documents()).extracting(d -> d.get("_id")).containsExactly("a1", "a0");
            assertThat(read.documents()).extracting(d -> d.getLong("balance")).containsExactly(10_005L, 9_995L);
            assertThat(counter.snapshot().commands()).isEqualTo(2);
        }
    }

    @Test
    void shouldAnswerInFlightWhenATransactionStaysUnsettled(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        FaultInjector crash = FaultInjector.atWrite("updateOne", "transactions", 2, FaultMode.CRASH_BEFORE);
        try {
            tpc(crash.wrap(db)).transfer(Transfer.of(OperationId.of("half"), "a0", "a1", 5));
        } catch (Error expected) {
            // died after preparing
        }

        SettledRead read = tpc(db).readSettled(Bank.ACCOUNTS, List.of("a0", "a1"), Duration.ofMillis(100));

        assertThat(read.isSettled()).isFalse();
        assertThat(read.documents()).isEmpty();
        assertThat(read.pendingTransactions()).contains("half");
    }

    @Test
    void shouldNotifyListenerAndCountInMetrics(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        List<String> events = new CopyOnWriteArrayList<>();
        TwoPhaseCommit tpc = TwoPhaseCommit.builder(db).listener(new TwoPhaseListener() {
            @Override
            public void onCommitted(OperationId id) {
                events.add("committed " + id);
            }

            @Override
            public void onCanceled(OperationId id, String reasonCode) {
                events.add("canceled " + id + " " + reasonCode);
                throw new IllegalStateException("a failing listener must not break the transaction");
            }

            @Override
            public void onRecovered(OperationId id, TransactionState from, TransactionState to) {
                events.add("recovered " + id + " " + from + "->" + to);
            }
        }).build();
        tpc.transfer(Transfer.of(OperationId.of("ok"), "a0", "a1", 5));
        try {
            tpc.transfer(Transfer.of(OperationId.of("too-much"), "a0", "a1", 1_000_000));
        } catch (InsufficientFundsException expected) {
            // canceled
        }
        FaultInjector crash = FaultInjector.atWrite("bulkWrite", "accounts", 3, FaultMode.CRASH_BEFORE);
        try {
            tpc(crash.wrap(db)).transfer(Transfer.of(OperationId.of("half"), "a2", "a3", 5));
        } catch (Error expected) {
            // died after deciding
        }
        tpc.recover(Duration.ZERO);

        assertThat(events).contains("committed ok", "canceled too-much INSUFFICIENT_FUNDS",
                "recovered half APPLIED->DONE");
        TwoPhaseMetrics metrics = tpc.metrics();
        assertThat(metrics.committed()).isEqualTo(2);
        assertThat(metrics.canceled()).isEqualTo(1);
        assertThat(metrics.recoveredForward()).isEqualTo(1);
    }

    @Test
    void shouldServeEveryQueryFromADeclaredIndex(MongoTarget target, MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit tpc = tpc(db);
        tpc.ensureIndexes();
        try (IndexCoverage coverage = IndexCoverage.attach(target, db.getName())) {
            tpc.transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 5));
            tpc.transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 5));
            try {
                tpc.transfer(Transfer.of(OperationId.of("t2"), "a0", "a1", 1_000_000));
            } catch (InsufficientFundsException expected) {
                // a canceled one too
            }
            tpc.submitTransfer(Transfer.of(OperationId.of("t3"), "a2", "a3", 5));
            tpc.processNext();
            FaultInjector crash = FaultInjector.atWrite("updateOne", "transactions", 2, FaultMode.CRASH_BEFORE);
            try {
                tpc(crash.wrap(db)).transfer(Transfer.of(OperationId.of("t4"), "a2", "a3", 5));
            } catch (Error expected) {
                // left for recovery
            }
            tpc.recover(Duration.ofSeconds(30));
            tpc.recover(Duration.ZERO);
            tpc.status();
            tpc.prune();
            tpc.readSettled(Bank.ACCOUNTS, List.of("a0", "a1"), Duration.ofMillis(50));

            assertThat(coverage.captured()).containsKeys(Bank.TRANSACTIONS, Bank.ACCOUNTS);
            assertThat(coverage.uncovered(db)).isEmpty();
        }
    }
}
