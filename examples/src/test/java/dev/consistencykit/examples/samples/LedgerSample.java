package dev.consistencykit.examples.samples;

import java.util.List;
import java.util.Map;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.logreconciliation.Change;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerCursor;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.logreconciliation.ReconcileReport;

/** The README's log-reconciliation sample. */
public final class LedgerSample {

    private LedgerSample() {
    }

    /** Opening balances, as credits in the log (a ledger's balances come only from its log). */
    public static void seed(MongoDatabase db) {
        Ledger ledger = Ledger.builder(db).build();
        ledger.ensureIndexes();
        ledger.apply(LedgerTransaction.of(Change.credit("alice", 10_000)).withId(OperationId.of("opening-alice")));
    }

    /** Runs the sample on {@code db}. */
    public static void run(MongoDatabase db) {
        long lastSeqIdSeen = 0;   // where a consumer of alice's feed left off
        // README:start
        Ledger ledger = Ledger.builder(db).overdraftFloor(0).build();       // caches in ledgerAccounts: {_id, balance, seqId}
        ledger.ensureIndexes();                                              // unique {changes.k}: seqId per account
        ledger.append(LedgerTransaction.transfer("alice", "bob", 2_500));    // one insert; seqIds learned and cached
        ledger.apply(LedgerTransaction.of(Change.debit("alice", 90), Change.credit("bob", 60), Change.credit("fees", 30))
                .asTransfer().withId(OperationId.of("order-42")));           // append + commit now; idempotent by id
        long alice = ledger.balance("alice");                                // cache + later valid changes: 3 round trips
        Map<String, Long> both = ledger.balances(List.of("alice", "bob"));   // read together: never half a transfer
        ledger.recover();                                                    // the committer, from any number of processes
        ReconcileReport report = ledger.reconcile("alice", false);           // fold the log, check cache and every cacheBal
        ledger.reverse(OperationId.of("order-42"));                          // compensating transaction, "order-42:reversal"
        LedgerCursor feed = ledger.cursor("alice", lastSeqIdSeen);           // committed changes, in order, none skipped
        // README:end
        Samples.check(alice == 10_000 - 2_500 - 90, "alice's balance after the transfers: " + alice);
        Samples.check(report.consistent(), "the log and the cache agree: " + report);
        Samples.check(both.get("alice") + both.get("bob") == 10_000 - 90 + 60, "alice and bob read together: " + both);
        Samples.check(!feed.poll(10).isEmpty(), "alice's feed has her committed changes");
    }
}
