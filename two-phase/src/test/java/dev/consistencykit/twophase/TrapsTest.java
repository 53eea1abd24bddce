package dev.consistencykit.twophase;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;


import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.testkit.DatabaseSnapshot;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** The seven traps of the published recipe, each closed and each with a test. */
@ExtendWith(MongoTestExtension.class)
@SuppressWarnings("unchecked")
class TrapsTest {

    private static final Map<String, Long> ACCOUNTS = Bank.accounts(3, 1_000);

    private static TwoPhaseCommit tpc(MongoDatabase db) {
        return TwoPhaseCommit.builder(db).retryPolicy(TestPolicies.FAST_RETRY).build();
    }

    private static Document tx(MongoDatabase db, String id) {
        return db.getCollection(Bank.TRANSACTIONS).find(eq("_id", id)).first();
    }

    @Test
    void shouldCancelATransferWhoseCreditAtCommitWouldPassTheRangeOfALong(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        db.getCollection(Bank.ACCOUNTS).updateOne(eq("_id", "a1"), Updates.set("balance", Long.MAX_VALUE - 50));

        assertThatThrownBy(() -> tpc(db).transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 100)))
                .isInstanceOf(ArithmeticOverflowException.class).hasMessageContaining("accounts/a1");

        assertThat(Bank.balance(db, "a0")).isEqualTo(1_000);
        assertThat(Bank.balance(db, "a1")).isEqualTo(Long.MAX_VALUE - 50);
    }

    @Test
    void shouldRefuseACommitCreditThatOtherCreditsSinceThePreparePushedPastTheRange(MongoDatabase db)
            throws Exception {
        Bank.seed(db, ACCOUNTS);
        db.getCollection(Bank.ACCOUNTS).updateOne(eq("_id", "a1"), Updates.set("balance", Long.MAX_VALUE - 150));
        // t1 prepared (a0 debited, a1 marked) and held before its decision
        FaultInjector held = FaultInjector.atWrite("updateOne", Bank.TRANSACTIONS, 2, FaultMode.PAUSE);
        java.util.concurrent.CompletableFuture<OperationResult> t1 = java.util.concurrent.CompletableFuture
                .supplyAsync(() -> tpc(held.wrap(db)).transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 100)));
        assertThat(held.awaitPaused(Duration.ofSeconds(10))).isTrue();
        assertThat(tpc(db).transfer(Transfer.of(OperationId.of("t2"), "a2", "a1", 100)).isCommitted()).isTrue();
        held.release();

        assertThatThrownBy(() -> t1.get(30, java.util.concurrent.TimeUnit.SECONDS))
                .hasCauseInstanceOf(CommitStuckException.class).hasMessageContaining("64-bit");
        assertThat(Bank.balance(db, "a1")).as("not wrapped").isEqualTo(Long.MAX_VALUE - 50);
        assertThat(tx(db, "t1").getString("state")).isEqualTo("applied");
    }

    @Test
    void shouldCancelTypedWithTheServersReasonWhateverTheRefusedDocumentHolds(MongoDatabase db) {
        // the server decides a precondition; the reason is its answer, not a Java evaluation of what was read back
        // (which threw on an infinite balance or on a path through an array, and could disagree with the server)
        db.getCollection("stock").insertMany(List.of(new Document("_id", "inf").append("balance", Double.NEGATIVE_INFINITY),
                new Document("_id", "arr").append("items", List.of(new Document("qty", 1))),
                new Document("_id", "nul").append("flag", null),
                new Document("_id", "ok").append("balance", 10L)));
        DatabaseSnapshot before = DatabaseSnapshot.of(db);

        assertThatThrownBy(() -> tpc(db).apply(TwoPhaseTransaction.of(OperationId.of("inf"),
                Participant.on("stock", "ok").prepare(Updates.inc("balance", 1L)).rollback(Updates.inc("balance", -1L)),
                Participant.on("stock", "inf").when(Filters.gte("balance", 5)).prepare(Updates.inc("balance", -5)))))
                .isInstanceOf(TransactionCanceledException.class).hasMessageContaining("stock/inf")
                .hasMessageContaining("balance");
        assertThatThrownBy(() -> tpc(db).apply(TwoPhaseTransaction.of(OperationId.of("arr"),
                Participant.on("stock", "arr").when(Filters.gte("items.0.qty", 5)).prepare(Updates.set("x", 1)))))
                .isInstanceOf(TransactionCanceledException.class).hasMessageContaining("items.0.qty");
        assertThat(tpc(db).apply(TwoPhaseTransaction.of(OperationId.of("nul"),
                Participant.on("stock", "nul").when(Filters.exists("flag")).prepare(Updates.set("x", 1))))
                .isCommitted()).as("a field holding null exists, as the server says").isTrue();
        assertThatThrownBy(() -> tpc(db).apply(TwoPhaseTransaction.of(OperationId.of("nul2"),
                Participant.on("stock", "nul").when(Filters.exists("flag", false)).prepare(Updates.set("y", 1)))))
                .isInstanceOf(TransactionCanceledException.class).hasMessageContaining("flag");

        assertThat(DatabaseSnapshot.of(db).collections().get("stock")).as("no net effect on the refused ones")
                .filteredOn(d -> !"nul".equals(d.get("_id")))
                .isEqualTo(before.collections().get("stock").stream().filter(d -> !"nul".equals(d.get("_id"))).toList());
        for (String id : List.of("inf", "arr", "nul2")) {
            assertThat(tx(db, id).get("reason", Document.class).getString("code"))
                    .isEqualTo(CancellationReason.PRECONDITION_FAILED.stored());
        }
    }

    // ---- 1. two applications pick the same transaction ------------------------------------------------------

    @Test
    void shouldCancelAPrepareWhoseIncWouldPassTheRangeOfALongInsteadOfWrapping(MongoDatabase db) {
        db.getCollection("counters").insertMany(List.of(new Document("_id", "high").append("n", Long.MAX_VALUE - 5),
                new Document("_id", "low").append("n", Long.MIN_VALUE + 5), new Document("_id", "other")
                        .append("n", 0L)));
        List<Long> before = db.getCollection("counters").distinct("n", Long.class).into(new ArrayList<>());

        assertThatThrownBy(() -> tpc(db).apply(TwoPhaseTransaction.of(OperationId.of("up"),
                Participant.on("counters", "other").prepare(Updates.inc("n", 1L)).rollback(Updates.inc("n", -1L)),
                Participant.on("counters", "high").prepare(Updates.inc("n", 10L)))))
                .isInstanceOf(ArithmeticOverflowException.class).hasMessageContaining("counters/high")
                .hasMessageContaining("64-bit");
        assertThatThrownBy(() -> tpc(db).apply(TwoPhaseTransaction.of(OperationId.of("down"),
                Participant.on("counters", "low").prepare(Updates.inc("n", -10))))).isInstanceOf(
                ArithmeticOverflowException.class);

        assertThat(db.getCollection("counters").distinct("n", Long.class).into(new ArrayList<>()))
                .as("no net effect").isEqualTo(before);
        assertThat(tx(db, "up").get("reason", Document.class).getString("code"))
                .isEqualTo(CancellationReason.OVERFLOW.stored());
        tpc(db).apply(TwoPhaseTransaction.of(OperationId.of("fits"),
                Participant.on("counters", "high").prepare(Updates.inc("n", 5L))));
        assertThat(db.getCollection("counters").find(eq("_id", "high")).first().getLong("n"))
                .isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void shouldReportNothingDoneByARecovererFencedOutByALaterOne(MongoDatabase db) throws Exception {
        Bank.seed(db, ACCOUNTS);
        FaultInjector crash = FaultInjector.atWrite("bulkWrite", Bank.ACCOUNTS, 3, FaultMode.CRASH_BEFORE);
        try {
            tpc(crash.wrap(db)).transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 5));
        } catch (Error expected) {
            // decided, not committed
        }
        FaultInjector held = FaultInjector.atWrite("bulkWrite", Bank.ACCOUNTS, 1, FaultMode.PAUSE);
        CompletableFuture<RecoveryReport> first = CompletableFuture.supplyAsync(
                () -> tpc(held.wrap(db)).recover(Duration.ZERO));
        assertThat(held.awaitPaused(Duration.ofSeconds(10))).isTrue();

        RecoveryReport second = tpc(db).recover(Duration.ZERO);
        held.release();
        RecoveryReport fenced = first.get(30, TimeUnit.SECONDS);

        assertThat(second.rolledForward()).isEqualTo(1);
        assertThat(fenced.rolledForward() + fenced.rolledBack()).as("it did nothing: %s", fenced).isZero();
        assertThat(tx(db, "t1").getString("state")).isEqualTo("done");
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
    }

    @Test
    void shouldLetExactlyOneWorkerDriveWhenManyClaimTheSameTransaction(MongoDatabase db) throws Exception {
        Bank.seed(db, ACCOUNTS);
        tpc(db).submitTransfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 100));
        ExecutorService pool = Executors.newFixedThreadPool(8);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<Optional<OperationResult>>> results = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                TwoPhaseCommit worker = tpc(db);
                results.add(pool.submit(() -> {
                    start.await();
                    return worker.processNext();
                }));
            }
            start.countDown();
            int drove = 0;
            for (Future<Optional<OperationResult>> r : results) {
                drove += r.get(30, TimeUnit.SECONDS).isPresent() ? 1 : 0;
            }

            assertThat(drove).isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
        assertThat(tx(db, "t1").getList("history", String.class)).containsExactly("initial", "pending", "applied",
                "done");
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
        assertThat(Bank.balance(db, "a1")).isEqualTo(1_100);
    }

    @Test
    void shouldLetExactlyOneRecovererTakeOverWhenTwoRace(MongoDatabase db) throws Exception {
        Bank.seed(db, ACCOUNTS);
        FaultInjector crash = FaultInjector.atWrite("updateOne", "transactions", 2, FaultMode.CRASH_BEFORE);
        assertThatThrownBy(() -> tpc(crash.wrap(db)).transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 100)))
                .isInstanceOf(Error.class);
        CountDownLatch start = new CountDownLatch(1);
        CompletableFuture<RecoveryReport> first = CompletableFuture.supplyAsync(() -> await(start, tpc(db)));
        CompletableFuture<RecoveryReport> second = CompletableFuture.supplyAsync(() -> await(start, tpc(db)));
        start.countDown();

        RecoveryReport a = first.get(30, TimeUnit.SECONDS);
        RecoveryReport b = second.get(30, TimeUnit.SECONDS);

        assertThat(a.repaired() + b.repaired()).isEqualTo(1);
        assertThat(tx(db, "t1").getList("history", String.class)).containsExactly("pending", "canceling", "canceled");
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
    }

    @Test
    void shouldLetTheSecondRecovererSkipWhenTheFirstClaimedBetweenItsReadAndItsClaim(MongoDatabase db)
            throws Exception {
        Bank.seed(db, ACCOUNTS);
        FaultInjector crash = FaultInjector.atWrite("updateOne", "transactions", 2, FaultMode.CRASH_BEFORE);
        assertThatThrownBy(() -> tpc(crash.wrap(db)).transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 100)))
                .isInstanceOf(Error.class);
        // recoverer B claims the transaction, then pauses before its first step
        FaultInjector pauseB = FaultInjector.atWrite("updateOne", "transactions", 1, FaultMode.PAUSE);
        TwoPhaseCommit b = tpc(pauseB.wrap(db));
        List<CompletableFuture<RecoveryReport>> bRun = new java.util.ArrayList<>(List.of(
                CompletableFuture.completedFuture(null)));
        // recoverer A has read the stale transaction; just before A's claim is sent, B claims it
        FaultInjector beforeClaimA = FaultInjector.withSchedule(w -> {
            if (w.number() == 1) {
                bRun.set(0, CompletableFuture.supplyAsync(() -> b.recover(Duration.ZERO)));
                try {
                    assertThat(pauseB.awaitPaused(Duration.ofSeconds(10))).isTrue();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return Optional.empty();
        });
        TwoPhaseCommit a = tpc(beforeClaimA.wrap(db));

        RecoveryReport reportA = a.recover(Duration.ZERO);
        pauseB.release();
        RecoveryReport reportB = bRun.get(0).get(30, TimeUnit.SECONDS);

        assertThat(reportA.repaired()).as("A's claim must fail: B holds the transaction").isZero();
        assertThat(reportA.skipped()).isEqualTo(1);
        assertThat(reportB.rolledBack()).isEqualTo(1);
        assertThat(a.metrics().leaseLost() + b.metrics().leaseLost()).as("nobody started driving and lost it")
                .isZero();
        assertThat(tx(db, "t1").getList("history", String.class)).containsExactly("pending", "canceling", "canceled");
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
    }

    private static RecoveryReport await(CountDownLatch start, TwoPhaseCommit tpc) {
        try {
            start.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return tpc.recover(Duration.ZERO);
    }

    // ---- 2. zombie owner -------------------------------------------------------------------------------------

    @Test
    void shouldRefuseZombieWritesWhenOwnerWakesAfterRecovery(MongoDatabase db) throws Exception {
        // write #2 is the reservation, #3 the prepare, #4 the decision, #5 the settle, #6 the finish
        for (int site = 2; site <= 6; site++) {
            MongoDatabase fresh = freshDatabase(db, site);
            Bank.seed(fresh, ACCOUNTS);
            FaultInjector zombie = FaultInjector.at(site, FaultMode.PAUSE);
            CompletableFuture<OperationResult> owner = CompletableFuture.supplyAsync(
                    () -> tpc(zombie.wrap(fresh)).transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 100)));
            assertThat(zombie.awaitPaused(Duration.ofSeconds(10))).isTrue();

            RecoveryReport recovered = tpc(fresh).recover(Duration.ZERO);
            zombie.release();
            OperationResult result = owner.get(30, TimeUnit.SECONDS);

            assertThat(recovered.repaired()).as("recovery took over at site " + site).isEqualTo(1);
            String state = tx(fresh, "t1").getString("state");
            assertThat(result.state()).as("the zombie reports what recovery decided, site " + site).isEqualTo(state);
            long expectedA1 = state.equals("done") ? 1_100 : 1_000;
            assertThat(Bank.balance(fresh, "a1")).as("site " + site).isEqualTo(expectedA1);
            assertThat(Bank.invariants(fresh, ACCOUNTS, true)).as("site " + site).isEmpty();
            MongoTarget.drop(fresh);
        }
    }

    private static MongoDatabase freshDatabase(MongoDatabase db, int i) {
        return dev.consistencykit.testkit.MongoTarget.fromEnvironment().client().getDatabase(db.getName() + "_" + i);
    }

    // ---- 3. rollback racing apply ----------------------------------------------------------------------------

    @Test
    void shouldEndAllOrNothingWhenCancelerRunsBetweenEveryPairOfApplierWrites(MongoDatabase db) {
        for (int site = 2; site <= 6; site++) {
            MongoDatabase fresh = freshDatabase(db, site);
            Bank.seed(fresh, ACCOUNTS);
            int before = site;
            AtomicInteger canceled = new AtomicInteger();
            FaultInjector racing = FaultInjector.withSchedule(w -> {
                if (w.number() == before) {
                    // a canceler (recovery that rolls stale pending back) runs just before this write is sent
                    canceled.addAndGet(tpc(fresh).recover(Duration.ZERO).rolledBack());
                }
                return Optional.empty();
            });

            OperationResult result = tpc(racing.wrap(fresh)).transfer(Transfer.of(OperationId.of("t1"), "a0", "a1",
                    100));

            String state = tx(fresh, "t1").getString("state");
            assertThat(result.state()).as("site " + site).isEqualTo(state);
            assertThat(state).as("site " + site).isEqualTo(site <= 4 ? "canceled" : "done");
            assertThat(canceled.get()).as("site " + site).isEqualTo(site <= 4 ? 1 : 0);
            assertThat(Bank.invariants(fresh, ACCOUNTS, true)).as("site " + site).isEmpty();
            MongoTarget.drop(fresh);
        }
    }

    // ---- 4. lost acknowledgement -----------------------------------------------------------------------------

    @Test
    void shouldNeitherAbandonNorFailWhenAnAcknowledgementIsLost(MongoDatabase db) {
        for (int site = 1; site <= 6; site++) {
            MongoDatabase fresh = freshDatabase(db, site);
            Bank.seed(fresh, ACCOUNTS);
            FaultInjector lost = FaultInjector.at(site, FaultMode.TRANSIENT_AFTER);

            OperationResult result = tpc(lost.wrap(fresh)).transfer(Transfer.of(OperationId.of("t1"), "a0", "a1",
                    100));

            assertThat(lost.faults()).as("site " + site).hasSize(1);
            assertThat(result.isCommitted()).as("site " + site).isTrue();
            assertThat(tx(fresh, "t1").getList("history", String.class)).as("site " + site)
                    .containsExactly("pending", "applied", "done");
            assertThat(Bank.balance(fresh, "a1")).as("site " + site).isEqualTo(1_100);
            assertThat(Bank.invariants(fresh, ACCOUNTS, true)).as("site " + site).isEmpty();
            MongoTarget.drop(fresh);
        }
    }

    // ---- 5. clock skew ---------------------------------------------------------------------------------------

    @Test
    void shouldStaySafeWhenProcessesDisagreeAboutTimeByHours(MongoDatabase db) throws Exception {
        Map<String, Long> accounts = Bank.accounts(4, 10_000);
        Bank.seed(db, accounts);
        ServerClock slow = ServerClock.unsynchronized(Clock.offset(Clock.systemUTC(), Duration.ofHours(-3)));
        ServerClock fast = ServerClock.unsynchronized(Clock.offset(Clock.systemUTC(), Duration.ofHours(5)));
        TwoPhaseCommit applier = TwoPhaseCommit.builder(db).serverClock(slow).retryPolicy(TestPolicies.FAST_RETRY)
                .build();
        // thinks every transaction is five hours old: takes over live ones at once
        TwoPhaseCommit recoverer = TwoPhaseCommit.builder(db).serverClock(fast).retryPolicy(TestPolicies.FAST_RETRY)
                .build();
        CompletableFuture<Void> recovering = CompletableFuture.runAsync(() -> {
            for (int i = 0; i < 200; i++) {
                recoverer.recover(Duration.ofMinutes(1));
            }
        });
        for (int i = 0; i < 60; i++) {
            try {
                applier.transfer(Transfer.of(OperationId.of("t" + i), "a" + (i % 4), "a" + ((i + 1) % 4), 10 + i));
            } catch (TransactionCanceledException expected) {
                // a cancellation is allowed; a double or half apply is not
            }
        }
        recovering.get(60, TimeUnit.SECONDS);
        tpc(db).recover(Duration.ZERO);

        assertThat(Bank.invariants(db, accounts, true)).isEmpty();
    }

    @Test
    void shouldOnlyChangeWhenRecoveryTakesOverWhenClockIsSkewed(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        FaultInjector crash = FaultInjector.atWrite("updateOne", "transactions", 2, FaultMode.CRASH_BEFORE);
        assertThatThrownBy(() -> tpc(crash.wrap(db)).transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 100)))
                .isInstanceOf(Error.class);
        ServerClock behind = ServerClock.unsynchronized(Clock.offset(Clock.systemUTC(), Duration.ofHours(-2)));
        TwoPhaseCommit late = TwoPhaseCommit.builder(db).serverClock(behind).build();
        TwoPhaseCommit skewedButMeasured = TwoPhaseCommit.builder(db)
                .clock(Clock.offset(Clock.systemUTC(), Duration.ofHours(7))).build();

        assertThat(late.recover(Duration.ofMinutes(1)).repaired()).as("a slow clock takes over late").isZero();
        assertThat(skewedButMeasured.recover(Duration.ofMinutes(1)).repaired())
                .as("a skewed local clock is corrected by measuring the server's").isZero();
        assertThat(tpc(db).recover(Duration.ZERO).repaired()).isEqualTo(1);
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
    }

    // ---- 6. poison participant -------------------------------------------------------------------------------

    @Test
    void shouldRejectUpdatesTheServerWouldRefuseBeforePersisting(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit tpc = tpc(db);
        DatabaseSnapshot before = DatabaseSnapshot.of(db);

        assertThatThrownBy(() -> tpc.apply(TwoPhaseTransaction.of(OperationId.of("p1"),
                Participant.on("accounts", "a0").prepare(Updates.combine(Updates.inc("balance", 1),
                        Updates.set("balance", 5))))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("updates balance and balance");
        assertThatThrownBy(() -> tpc.apply(TwoPhaseTransaction.of(OperationId.of("p2"),
                Participant.on("accounts", "a0").prepare(Updates.rename("balance", "b")))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("$rename is not supported");
        assertThatThrownBy(() -> tpc.apply(TwoPhaseTransaction.of(OperationId.of("p3"),
                Participant.on("accounts", "a0").prepare(new Document("$inc", new Document("balance", "ten"))))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("needs a number");
        assertThatThrownBy(() -> tpc.apply(TwoPhaseTransaction.of(OperationId.of("p4"),
                Participant.on("accounts", "a0").commit(Updates.pull("pendingTransactions", "x")))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("must not touch the transaction markers");
        assertThatThrownBy(() -> tpc.apply(TwoPhaseTransaction.of(OperationId.of("p5"),
                Participant.on("accounts", "a0").when(Filters.where("this.balance > 0")))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("$where");
        assertThatThrownBy(() -> tpc.apply(TwoPhaseTransaction.of(OperationId.of("p6"),
                Participant.on("accounts", "a0"), Participant.on("accounts", "a0"))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("a second time");

        assertThat(DatabaseSnapshot.of(db)).isEqualTo(before);
    }

    @Test
    void shouldCancelAndNotBlockLaterTransactionsWhenServerRefusesAPrepare(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        db.getCollection(Bank.ACCOUNTS).updateOne(eq("_id", "a2"), Updates.set("nickname", "not a number"));
        TwoPhaseCommit tpc = tpc(db);

        assertThatThrownBy(() -> tpc.apply(TwoPhaseTransaction.of(OperationId.of("poison"),
                Participant.on("accounts", "a0").prepare(Updates.inc("balance", -5L)).rollback(Updates.inc("balance",
                        5L)),
                Participant.on("accounts", "a2").prepare(Updates.push("nickname", 1)))))
                .isInstanceOf(ParticipantRejectedException.class).hasMessageContaining("accounts/a2");

        assertThat(tx(db, "poison").getString("state")).isEqualTo("canceled");
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
        OperationResult later = tpc.transfer(Transfer.of(OperationId.of("later"), "a0", "a2", 10));
        assertThat(later.isCommitted()).isTrue();
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
    }

    @Test
    void shouldRecordStuckCommitAndNotBlockLaterTransactionsWhenCommitIsRefused(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        db.getCollection(Bank.ACCOUNTS).updateOne(eq("_id", "a1"), Updates.set("visits", 0));
        FaultInjector sabotage = FaultInjector.withSchedule(w -> {
            if (w.number() == 5) {
                // between the decision and the settle, someone makes the commit update impossible
                db.getCollection(Bank.ACCOUNTS).updateOne(eq("_id", "a1"), Updates.set("visits", "many"));
            }
            return Optional.empty();
        });
        TwoPhaseTransaction tx = TwoPhaseTransaction.of(OperationId.of("stuck"),
                Participant.on("accounts", "a0").prepare(Updates.inc("balance", -5L))
                        .rollback(Updates.inc("balance", 5L)),
                Participant.on("accounts", "a1").commit(Updates.combine(Updates.inc("balance", 5L),
                        Updates.inc("visits", 1))));

        assertThatThrownBy(() -> tpc(sabotage.wrap(db)).apply(tx)).isInstanceOf(CommitStuckException.class)
                .hasMessageContaining("recovery will retry");

        assertThat(tx(db, "stuck").getString("state")).isEqualTo("applied");
        assertThat(tx(db, "stuck").get("lastError", Document.class)).isNotNull();
        assertThat(tpc(db).transfer(Transfer.of(OperationId.of("later"), "a2", "a1", 7)).isCommitted()).isTrue();
        assertThat(tpc(db).recover(Duration.ZERO).rolledForward()).as("still refused").isZero();

        db.getCollection(Bank.ACCOUNTS).updateOne(eq("_id", "a1"), Updates.set("visits", 0));
        assertThat(tpc(db).recover(Duration.ZERO).rolledForward()).isEqualTo(1);
        assertThat(tx(db, "stuck").getString("state")).isEqualTo("done");
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
    }

    @Test
    void shouldSetAsideATransactionWhoseRollbackTheServerRefusesAndRecoverTheRest(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        for (String id : List.of("bad", "good")) {
            // decided nothing: the owner died after preparing (its decision, write #2 of the record, never sent)
            FaultInjector crash = FaultInjector.atWrite("updateOne", Bank.TRANSACTIONS, 2, FaultMode.CRASH_BEFORE);
            String from = id.equals("bad") ? "a0" : "a2";
            assertThatThrownBy(() -> tpc(crash.wrap(db)).transfer(Transfer.of(OperationId.of(id), from, "a1", 5)))
                    .isInstanceOf(Error.class);
        }
        // someone writes a value the rollback's $inc cannot apply to
        db.getCollection(Bank.ACCOUNTS).updateOne(eq("_id", "a0"), Updates.set("balance", "frozen"));

        RecoveryReport first = tpc(db).recover(Duration.ZERO);
        RecoveryReport second = tpc(db).recover(Duration.ZERO);

        assertThat(first.rolledBack()).as("%s", first).isEqualTo(1);
        assertThat(first.setAside()).as("%s", first).isEqualTo(1);
        assertThat(tx(db, "good").getString("state")).isEqualTo("canceled");
        assertThat(tx(db, "bad").get("setAside", Document.class).getString("reason")).contains("refused");
        assertThat(second.examined()).as("set aside: not tried again").isZero();
        assertThat(tpc(db).interrupted(Duration.ZERO, 10)).singleElement().satisfies(i -> {
            assertThat(i.id()).isEqualTo("bad");
            assertThat(i.detail()).contains("set aside by recovery");
        });
    }

    // ---- 7. unbounded pendingTransactions --------------------------------------------------------------------

    @Test
    void shouldRefuseTypedAndLeaveMarkersIntactWhenDocumentIsAtItsCap(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit capped = TwoPhaseCommit.builder(db).maxPendingPerDocument(3)
                .retryPolicy(TestPolicies.FAST_RETRY).build();
        for (int i = 0; i < 3; i++) {
            // three transactions stuck half-way on a1 (their owners died after preparing)
            FaultInjector crash = FaultInjector.atWrite("updateOne", "transactions", 2, FaultMode.CRASH_BEFORE);
            int n = i;
            TwoPhaseCommit dying = TwoPhaseCommit.builder(crash.wrap(db)).maxPendingPerDocument(3).build();
            assertThatThrownBy(() -> dying.transfer(Transfer.of(OperationId.of("stuck" + n), "a0", "a1", 1)))
                    .isInstanceOf(Error.class);
        }
        Document before = db.getCollection(Bank.ACCOUNTS).find(eq("_id", "a1")).first();
        assertThat(before.getList("pendingTransactions", String.class)).hasSize(3);
        assertThat(before.getList("reservedTransactions", Object.class, List.of())).isEmpty();

        assertThatThrownBy(() -> capped.transfer(Transfer.of(OperationId.of("one-more"), "a2", "a1", 50)))
                .isInstanceOf(TooManyPendingTransactionsException.class).hasMessageContaining("cap is 3");

        Document after = db.getCollection(Bank.ACCOUNTS).find(eq("_id", "a1")).first();
        assertThat(after.getList("pendingTransactions", String.class))
                .containsExactlyElementsOf(before.getList("pendingTransactions", String.class));
        assertThat(Bank.balance(db, "a2")).isEqualTo(1_000);
        capped.recover(Duration.ZERO);
        assertThat(capped.transfer(Transfer.of(OperationId.of("after-recovery"), "a2", "a1", 50)).isCommitted())
                .isTrue();
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
    }
}
