package dev.consistencykit.logreconciliation;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.ChaosRunner;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

@ExtendWith(MongoTestExtension.class)
class ChaosTest {

    static final int SEEDS = 200;
    private static final Map<String, Long> OPENING = Books.accounts(4, 500);

    /** Transfers and three-way splits under the overdraft rule, appended or applied, with committers racing. */
    static ChaosRunner runner(MongoClient client) {
        return ChaosRunner.builder(client)
                .name("ledger")
                .workers(6)
                .operationsPerWorker(4)
                .faultRate(0.08)
                .maxPause(Duration.ofMillis(15))
                .recoverers(2)
                .setup(db -> {
                    Books.seed(db, OPENING);
                    Books.ledger(db).build().ensureIndexes();
                })
                .operation(ctx -> {
                    Ledger ledger = Books.ledger(ctx.database()).overdraftFloor(0).build();
                    OperationId id = OperationId.of("w" + ctx.worker() + "-" + ctx.sequence());
                    int a = ctx.random().nextInt(4);
                    int b = (a + 1 + ctx.random().nextInt(3)) % 4;
                    int c = (b + 1) % 4 == a ? (b + 2) % 4 : (b + 1) % 4;
                    long amount = 1L + ctx.random().nextInt(300);
                    LedgerTransaction tx = ctx.random().nextInt(4) == 0
                            ? new LedgerTransaction(id, List.of(Change.debit("a" + a, amount),
                                    Change.credit("a" + b, amount / 2), Change.credit("a" + c, amount - amount / 2)),
                                    true)
                            : LedgerTransaction.transfer("a" + a, "a" + b, amount).withId(id);
                    if (ctx.random().nextBoolean()) {
                        ledger.apply(tx);
                    } else {
                        ledger.append(tx);
                    }
                })
                .recovery(db -> Books.ledger(db).overdraftFloor(0).build().recover(Duration.ZERO))
                .invariants(db -> Books.invariants(db, OPENING, true, 0L))
                .build();
    }

    @Test
    void shouldKeepEveryInvariantAcross200Seeds(MongoClient client) {
        ChaosRunner.Summary summary = runner(client).runSeeds(1, SEEDS);

        assertThat(summary.seeds()).isEqualTo(SEEDS);
        assertThat(summary.crashes()).isPositive();
        assertThat(summary.failures()).as(summary.toString()).isEmpty();
    }
}
