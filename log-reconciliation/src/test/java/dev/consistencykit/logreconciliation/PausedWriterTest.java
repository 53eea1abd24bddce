package dev.consistencykit.logreconciliation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.bson.Document;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.InjectedCrash;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** Two actors of the ledger meeting at the wrong moment, each scenario made deterministic with a paused writer. */
@ExtendWith(MongoTestExtension.class)
class PausedWriterTest {

    private static Map<String, Long> opening() {
        Map<String, Long> opening = new LinkedHashMap<>();
        for (String account : new String[] {"alice", "bob", "carol", "dave"}) {
            opening.put(account, 100L);
        }
        return opening;
    }

    /** {@code opening} seeded, and alice-to-bob and bob-to-alice waiting for each other ({@link Books#waitingForEachOther}). */
    private static Ledger oppositeReservations(MongoDatabase db, Map<String, Long> opening) throws Exception {
        Books.seed(db, opening);
        Ledger ledger = Books.ledger(db).seqAllocation(SeqAllocation.COUNTER).build();
        ledger.ensureIndexes();
        Books.waitingForEachOther(db, "alice", "bob");
        return ledger;
    }

    @Test
    void shouldCommitBothWhenOppositeTransfersReservedTheirNumbersInOppositeOrders(MongoDatabase db)
            throws Exception {
        Map<String, Long> opening = opening();
        Ledger ledger = oppositeReservations(db, opening);
        ledger.append(LedgerTransaction.transfer("carol", "dave", 7).withId(OperationId.of("carol-to-dave")));

        ledger.recover(Duration.ZERO);

        assertThat(Books.invariants(db, opening, true, null)).isEmpty();
        assertThat(ledger.balance("alice")).isEqualTo(100 - 1 - 5 + 3);
        assertThat(ledger.balance("bob")).isEqualTo(100 + 1 + 5 - 3);
        assertThat(ledger.balance("carol")).isEqualTo(93);
        assertThat(ledger.balance("dave")).isEqualTo(107);
    }

    /**
     * A committer decides a transaction for the numbers it read while another, which saw it in a wait cycle a moment
     * before, moves it to fresh numbers: the decision was taken where the transaction no longer stands (its
     * {@code cacheBal}s and the overdraft rule against the balances before its old numbers) and must not land on it.
     * Committer Y walks from bob-to-alice, finds alice-to-bob waiting for it and pauses before moving alice-to-bob;
     * committer X walks from alice-to-bob, moves bob-to-alice out of the cycle, commits the filler of bob:2, reads
     * alice-to-bob decidable at alice:2, bob:3 and pauses before deciding it; Y's move lands (Y stops after it); X's
     * decision is sent. Deciding on the transaction's id and state alone, it landed on the moved transaction, X
     * committed it without moving a cache, and every later transaction of alice waited for it for good.
     */
    @Test
    void shouldNeverRecordADecisionOnATransactionAnotherCommitterMovedMeanwhile(MongoDatabase db) throws Exception {
        Map<String, Long> opening = opening();
        Ledger ledger = oppositeReservations(db, opening);
        MongoCollection<Document> log = db.getCollection(LedgerConfig.DEFAULT_LEDGER_COLLECTION);
        List<Document> aliceToBobAt = changesOf(log, "alice-to-bob");
        List<Document> bobToAliceAt = changesOf(log, "bob-to-alice");
        // Y: paused before its move of alice-to-bob (its first write of the log), then stopped just after it landed
        FaultInjector beforeMove = FaultInjector.atWrite("updateOne", "ledger", 1, FaultMode.PAUSE);
        FaultInjector afterMove = FaultInjector.atWrite("updateOne", "ledger", 1, FaultMode.PAUSE_AFTER);
        Ledger y = Books.ledger(beforeMove.wrap(afterMove.wrap(db))).seqAllocation(SeqAllocation.COUNTER).build();
        CompletableFuture<?> yRuns = CompletableFuture.runAsync(() -> y.recoverOne(OperationId.of("bob-to-alice")
                .value(), Duration.ZERO));
        assertThat(beforeMove.awaitPaused(Duration.ofSeconds(10))).isTrue();
        // X: moves bob-to-alice (#1), fills bob:2 and alice:3 (#2, #3), decides and commits the filler of bob:2 (#4,
        // #5), then pauses before deciding alice-to-bob (#6)
        FaultInjector beforeDecision = FaultInjector.atWrite("updateOne", "ledger", 6, FaultMode.PAUSE);
        Ledger x = Books.ledger(beforeDecision.wrap(db)).seqAllocation(SeqAllocation.COUNTER).build();
        CompletableFuture<?> xRuns = CompletableFuture.runAsync(() -> x.recoverOne(OperationId.of("alice-to-bob")
                .value(), Duration.ZERO));
        assertThat(beforeDecision.awaitPaused(Duration.ofSeconds(10))).isTrue();
        assertThat(changesOf(log, "bob-to-alice")).as("X moved bob-to-alice").isNotEqualTo(bobToAliceAt);
        assertThat(changesOf(log, "alice-to-bob")).as("X is about to decide alice-to-bob where it stood")
                .isEqualTo(aliceToBobAt);

        beforeMove.release();
        assertThat(afterMove.awaitPaused(Duration.ofSeconds(10))).isTrue();
        assertThat(changesOf(log, "alice-to-bob")).as("Y moved alice-to-bob").isNotEqualTo(aliceToBobAt);
        beforeDecision.release();
        xRuns.get(30, TimeUnit.SECONDS);
        afterMove.release();
        yRuns.get(30, TimeUnit.SECONDS);
        ledger.recover(Duration.ZERO);

        assertThat(Books.invariants(db, opening, true, 0L)).isEmpty();
        assertThat(ledger.balances(List.of("alice", "bob"))).containsEntry("alice", 100L - 1 - 5 + 3)
                .containsEntry("bob", 100L + 1 + 5 - 3);
    }

    /**
     * A committer moves a transaction appended at a number an archive had passed, then dies before filling the number
     * it left in its other account's log: the next committer fills it once the transaction waiting on it is stale, in
     * either allocation (with numbers learned by query, nothing else ever fills it, and the account's log waited for
     * it for good).
     */
    @Test
    void shouldCommitPastANumberAMovedTransactionLeftWhenItsMoverDiedBeforeFillingIt(MongoDatabase db) {
        Map<String, Long> opening = opening();
        Books.seed(db, opening);
        Ledger first = Books.ledger(db).build();
        first.ensureIndexes();
        first.apply(LedgerTransaction.of(Change.credit("alice", 100)));    // process 1 caches alice's head: 1
        first.recover(Duration.ofDays(1));
        Ledger second = Books.ledger(db).build();
        for (int i = 0; i < 3; i++) {
            second.apply(LedgerTransaction.transfer("alice", "bob", 10));   // alice 2..4, bob 1..3
        }
        assertThat(second.archive(Duration.ZERO)).isEqualTo(4);
        first.append(LedgerTransaction.transfer("alice", "bob", 5).withId(OperationId.of("late")));  // alice:2, bob:4

        // the committer moves "late" to alice:5, bob:5 (its first write of the log) and dies before filling bob:4
        FaultInjector crash = FaultInjector.atWrite("updateOne", "ledger", 1, FaultMode.CRASH_AFTER);
        Ledger dying = Books.ledger(crash.wrap(db)).build();
        assertThatThrownBy(() -> dying.recover(Duration.ZERO)).isInstanceOf(InjectedCrash.class);
        // a process learning bob's head from the log appends after the number left
        Books.ledger(db).build().append(LedgerTransaction.transfer("bob", "carol", 7).withId(OperationId.of("after")));
        second.recover(Duration.ZERO);

        assertThat(Books.invariants(db, opening, false, null)).isEmpty();
        assertThat(second.balances(List.of("alice", "bob", "carol"))).containsEntry("alice", 165L)
                .containsEntry("bob", 128L).containsEntry("carol", 107L);
    }

    private static List<Document> changesOf(MongoCollection<Document> log, String id) {
        return log.find(Filters.eq("_id", id)).first().getList("changes", Document.class);
    }

    @Test
    void shouldNeverCreateMoneyWhenAProcessAppendsWithAHeadCachedBeforeAnArchive(MongoDatabase db) {
        Map<String, Long> opening = opening();
        Books.seed(db, opening);
        Ledger first = Books.ledger(db).build();
        first.ensureIndexes();
        first.apply(LedgerTransaction.of(Change.credit("alice", 100)));    // process 1 caches alice's head: 1
        first.recover(Duration.ofDays(1));   // its maintenance releases what it appended (RecordReleases)
        Ledger second = Books.ledger(db).build();
        for (int i = 0; i < 3; i++) {
            second.apply(LedgerTransaction.transfer("alice", "bob", 10));   // alice 2..4, bob 1..3, committed
        }
        assertThat(second.archive(Duration.ZERO)).isEqualTo(4);

        // process 1 appends with its cached head: alice's next number looks like 2, which archive removed
        first.append(LedgerTransaction.transfer("alice", "bob", 5).withId(OperationId.of("late")));
        long total = 0;
        for (String account : opening.keySet()) {
            total += second.balance(account);
        }
        assertThat(total).as("money is neither created nor lost, even before the committer runs").isEqualTo(500);
        assertThat(second.balance("alice")).isEqualTo(100 + 100 - 30 - 5);

        second.append(LedgerTransaction.transfer("carol", "dave", 7).withId(OperationId.of("unrelated")));
        second.recover(Duration.ZERO);

        assertThat(Books.invariants(db, opening, false, null)).isEmpty();
        assertThat(second.balance("alice")).isEqualTo(165);
        assertThat(second.balance("bob")).isEqualTo(135);
        assertThat(second.balance("carol")).isEqualTo(93);
        assertThat(second.balance("dave")).isEqualTo(107);
    }
}
