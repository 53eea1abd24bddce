package dev.consistencykit.logreconciliation;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
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

    @Test
    void shouldCommitBothWhenOppositeTransfersReservedTheirNumbersInOppositeOrders(MongoDatabase db)
            throws Exception {
        Map<String, Long> opening = opening();
        Books.seed(db, opening);
        Ledger ledger = Books.ledger(db).seqAllocation(SeqAllocation.COUNTER).build();
        ledger.ensureIndexes();
        ledger.apply(LedgerTransaction.transfer("alice", "bob", 1));      // alice:1, bob:1
        // alice -> bob reserves alice's number (its write #1), then pauses before reserving bob's (#2) ...
        FaultInjector pause = FaultInjector.atWrite("findOneAndUpdate", "ledgerAccounts", 2, FaultMode.PAUSE);
        Ledger paused = Books.ledger(pause.wrap(db)).seqAllocation(SeqAllocation.COUNTER).build();
        CompletableFuture<OperationId> aliceToBob = CompletableFuture.supplyAsync(() -> paused.append(
                LedgerTransaction.transfer("alice", "bob", 5).withId(OperationId.of("alice-to-bob"))));
        assertThat(pause.awaitPaused(Duration.ofSeconds(10))).isTrue();
        // ... while bob -> alice reserves bob:2 and alice:3
        ledger.append(LedgerTransaction.transfer("bob", "alice", 3).withId(OperationId.of("bob-to-alice")));
        pause.release();
        aliceToBob.get(30, TimeUnit.SECONDS);                              // alice:2, bob:3
        ledger.append(LedgerTransaction.transfer("carol", "dave", 7).withId(OperationId.of("carol-to-dave")));

        ledger.recover(Duration.ZERO);

        assertThat(Books.invariants(db, opening, true, null)).isEmpty();
        assertThat(ledger.balance("alice")).isEqualTo(100 - 1 - 5 + 3);
        assertThat(ledger.balance("bob")).isEqualTo(100 + 1 + 5 - 3);
        assertThat(ledger.balance("carol")).isEqualTo(93);
        assertThat(ledger.balance("dave")).isEqualTo(107);
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
