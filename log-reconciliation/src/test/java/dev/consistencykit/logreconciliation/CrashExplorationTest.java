package dev.consistencykit.logreconciliation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** Append + commit crashed at every write, then the committer in a fresh instance. */
@ExtendWith(MongoTestExtension.class)
class CrashExplorationTest {

    private static final Map<String, Long> OPENING = Books.accounts(3, 1_000);

    static CrashPointExplorer.ExplorationReport explore(MongoClient client, LedgerTransaction tx,
                                                        SeqAllocation allocation, boolean recoveryFaults) {
        BooksWorkload books = BooksWorkload.transfers(OPENING).allocation(allocation)
                // an earlier transaction still uncommitted: the commit must take it first
                .alsoSeeding(db -> Books.ledger(db).seqAllocation(allocation).build()
                        .append(LedgerTransaction.transfer("a2", "a0", 5).withId(OperationId.of("earlier"))));
        return CrashPointExplorer.builder(client)
                .name("ledger")
                .workload(books.operation((db, ledger, random) -> ledger.apply(tx)))
                .recoveryFaults(recoveryFaults)
                .build().explore();
    }

    @Test
    void shouldKeepEveryInvariantWhenATransferCrashesAtAnyWrite(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = explore(client,
                LedgerTransaction.transfer("a0", "a1", 250).withId(OperationId.of("t1")), SeqAllocation.QUERY, true);

        // append; then the earlier one (decide, advance a2 and a0, mark), then ours (decide, advance a0 and a1, mark)
        assertThat(report.sites()).extracting(s -> s.method() + " " + s.collection()).containsExactly(
                "updateOne ledger", "updateOne ledger", "updateOne ledgerAccounts", "updateOne ledgerAccounts",
                "updateOne ledger", "updateOne ledger", "updateOne ledgerAccounts", "updateOne ledgerAccounts",
                "updateOne ledger");
        assertThat(report.scenarios()).isGreaterThanOrEqualTo(1 + 9 * FaultMode.values().length * 2);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldKeepEveryInvariantWhenAThreeAccountSplitCrashesAtAnyWrite(MongoClient client) {
        LedgerTransaction split = new LedgerTransaction(OperationId.of("split"), List.of(Change.debit("a0", 90),
                Change.credit("a1", 60), Change.credit("a2", 30)), true);

        CrashPointExplorer.ExplorationReport report = explore(client, split, SeqAllocation.QUERY, false);

        assertThat(report.writeSites()).isEqualTo(1 + 4 + 5);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldKeepEveryInvariantWithCounterAllocationWhenATransferCrashesAtAnyWrite(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = explore(client,
                LedgerTransaction.transfer("a0", "a1", 250).withId(OperationId.of("t1")), SeqAllocation.COUNTER,
                false);

        assertThat(report.sites().get(0).method()).isEqualTo("findOneAndUpdate");
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }
}
