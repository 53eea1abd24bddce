package dev.consistencykit.twophase;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.AfterCommand;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * {@code readConsistent} counts every transaction in flight entirely or not at all and never waits: while one is
 * held between reserve and apply, when it is decided between the read's find and its lookup, past a reservation a
 * paused owner left after everything settled (with the record kept or pruned), and under writers that never stop.
 * Every pause point of a transfer is covered by {@link InterleavingTest}'s consistent reader.
 */
@ExtendWith(MongoTestExtension.class)
class ReadConsistentTest {

    private static final Map<String, Long> ACCOUNTS = Bank.accounts(3, 1_000);
    private static final List<String> IDS = List.of("a0", "a1", "a2");

    private static TwoPhaseCommit tpc(MongoDatabase db) {
        return TwoPhaseCommit.builder(db).retryPolicy(TestPolicies.FAST_RETRY).build();
    }

    private static List<Long> balances(ConsistentRead read) {
        return read.documents().stream().map(d -> ((Number) d.get("balance")).longValue()).toList();
    }

    @Test
    void shouldCountATransactionDecidedBetweenTheFindAndTheLookupEntirely(MongoTarget target, MongoDatabase db)
            throws Exception {
        Bank.seed(db, ACCOUNTS);
        // held after reserving both accounts (the first bulk write), before applying (the second)
        FaultInjector held = FaultInjector.atWrite("bulkWrite", Bank.ACCOUNTS, 2, FaultMode.PAUSE);
        CompletableFuture<?> transfer = CompletableFuture.runAsync(() -> tpc(held.wrap(db))
                .transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 100)));
        assertThat(held.awaitPaused(Duration.ofSeconds(10))).isTrue();
        ConsistentRead read;
        // the find sees t1 reserved on both; the transfer then commits and settles before the lookup reads "done"
        try (AfterCommand finish = AfterCommand.once(target, db.getName(), () -> {
            held.release();
            transfer.join();
        })) {
            read = tpc(db).readConsistent(Bank.ACCOUNTS, IDS);
            assertThat(finish.ran()).isTrue();
        }

        assertThat(read.isResolved()).as("%s", read).isTrue();
        assertThat(balances(read)).containsExactly(900L, 1_100L, 1_000L);
        assertThat(read.documents()).allSatisfy(d -> assertThat(d).doesNotContainKeys("reservedTransactions",
                "pendingTransactions"));
    }

    @Test
    void shouldShowAnUndecidedTransactionAsIfItHadNotRun(MongoDatabase db) throws Exception {
        Bank.seed(db, ACCOUNTS);
        // held after applying (the debit is on a0) and before the decision
        FaultInjector held = FaultInjector.atWrite("updateOne", Bank.TRANSACTIONS, 2, FaultMode.PAUSE);
        CompletableFuture<?> transfer = CompletableFuture.runAsync(() -> tpc(held.wrap(db))
                .transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 100)));
        try {
            held.awaitPaused(Duration.ofSeconds(10));
            ConsistentRead read = tpc(db).readConsistent(Bank.ACCOUNTS, IDS);

            assertThat(read.isResolved()).isTrue();
            long sum = balances(read).stream().mapToLong(Long::longValue).sum();
            assertThat(sum).isEqualTo(3_000);
            assertThat(read.counted()).isEmpty();
        } finally {
            held.release();
            transfer.get(30, TimeUnit.SECONDS);
        }
        assertThat(balances(tpc(db).readConsistent(Bank.ACCOUNTS, IDS))).containsExactly(900L, 1_100L, 1_000L);
    }

    @Test
    void shouldIgnoreAReservationAPausedOwnerSentAfterTheTransactionSettled(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        tpc(db).transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 100));
        // what a late reserve leaves: the transaction's effect is in place and settled; a reservation is back
        db.getCollection(Bank.ACCOUNTS).updateOne(Filters.eq("_id", "a0"), Updates.push("reservedTransactions",
                new Document("o", "t1").append("n", "late")));

        ConsistentRead kept = tpc(db).readConsistent(Bank.ACCOUNTS, IDS);
        db.getCollection(Bank.TRANSACTIONS).deleteOne(Filters.eq("_id", "t1"));   // as prune does, later
        ConsistentRead pruned = tpc(db).readConsistent(Bank.ACCOUNTS, IDS);

        for (ConsistentRead read : List.of(kept, pruned)) {
            assertThat(read.isResolved()).as("%s", read).isTrue();
            assertThat(balances(read)).containsExactly(900L, 1_100L, 1_000L);
            assertThat(read.documents().get(0)).doesNotContainKey("reservedTransactions");
        }
    }

    @Test
    void shouldNameTheTransactionsWhoseUpdateOnlyTheServerCanApply(MongoDatabase db) throws Exception {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseTransaction stamped = TwoPhaseTransaction.of(OperationId.of("t1"),
                Participant.on(Bank.ACCOUNTS, "a0").prepare(Updates.inc("balance", -5))
                        .commit(Updates.currentDate("touched")).rollback(Updates.inc("balance", 5)));
        // one participant: its reserve, apply and settle are single updates; held before the settle
        FaultInjector held = FaultInjector.at(site -> site.collection().equals(Bank.ACCOUNTS), 3, FaultMode.PAUSE);
        CompletableFuture<?> apply = CompletableFuture.runAsync(() -> tpc(held.wrap(db)).apply(stamped));
        try {
            held.awaitPaused(Duration.ofSeconds(10));   // decided, commit update not yet applied
            ConsistentRead read = tpc(db).readConsistent(Bank.ACCOUNTS, IDS);

            assertThat(read.isResolved()).isFalse();
            assertThat(read.unresolved()).containsExactly("t1");
            assertThat(read.documents()).isEmpty();
        } finally {
            held.release();
            apply.get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldAnswerEveryReadWithMoneyConservedWhileWritersNeverStop(MongoDatabase db) throws Exception {
        Map<String, Long> bank = Bank.accounts(4, 1_000);
        Bank.seed(db, bank);
        List<String> ids = new ArrayList<>(bank.keySet());
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService writers = Executors.newFixedThreadPool(3);
        List<Future<?>> running = new ArrayList<>();
        for (int w = 0; w < 3; w++) {
            int seed = w;
            running.add(writers.submit(() -> {
                TwoPhaseCommit payments = tpc(db);
                java.util.Random random = new java.util.Random(seed);
                while (!stop.get()) {
                    int from = random.nextInt(4);
                    int to = (from + 1 + random.nextInt(3)) % 4;
                    payments.transfer(Transfer.of(OperationId.random(), "a" + from, "a" + to,
                            1 + random.nextInt(50)));
                }
                return null;
            }));
        }
        int resolved = 0;
        List<String> anomalies = new ArrayList<>();
        try {
            TwoPhaseCommit reader = tpc(db);
            for (int i = 0; i < 200; i++) {
                ConsistentRead read = reader.readConsistent(Bank.ACCOUNTS, ids);
                if (read.isResolved()) {
                    resolved++;
                    long sum = balances(read).stream().mapToLong(Long::longValue).sum();
                    if (sum != 4_000) {
                        anomalies.add("summed " + sum + ": " + read);
                    }
                }
            }
        } finally {
            stop.set(true);
            writers.shutdown();
            for (Future<?> f : running) {
                f.get(60, TimeUnit.SECONDS);
            }
        }

        assertThat(anomalies).isEmpty();
        assertThat(resolved).as("reads answered with documents").isGreaterThanOrEqualTo(190);
        assertThat(Bank.invariants(db, bank, true)).isEmpty();
    }
}
