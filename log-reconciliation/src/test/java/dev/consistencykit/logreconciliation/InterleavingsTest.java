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
import dev.consistencykit.testkit.MongoTestExtension;

/** Two actors of the ledger meeting at the wrong moment, each scenario made deterministic with a paused writer. */
@ExtendWith(MongoTestExtension.class)
class InterleavingsTest {

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
        FaultInjector pause = FaultInjector.at(2, FaultMode.PAUSE);
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
}
