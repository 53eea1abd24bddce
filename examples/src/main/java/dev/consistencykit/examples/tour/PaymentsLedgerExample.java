package dev.consistencykit.examples.tour;

import java.time.Duration;
import java.util.List;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.InjectedCrash;

/** Log reconciliation: a payments ledger whose cached balances are provable from the log. */
public final class PaymentsLedgerExample implements TourExample {

    @Override
    public String pattern() {
        return "log-reconciliation";
    }

    @Override
    public String title() {
        return "Log reconciliation: a payments ledger";
    }

    @Override
    public void run(MongoDatabase db, Narration n) {
        n.step("setup: alice and bob open with 100.00 each, as checkpoints their logs start after");
        for (String account : List.of("alice", "bob")) {
            db.getCollection("ledgerAccounts").insertOne(new Document("_id", account).append("balance", 10_000L)
                    .append("seqId", 0L).append("checkpoint", new Document("seqId", 0L).append("balance", 10_000L)));
        }
        Ledger.on(db).ensureIndexes();

        n.step("alice pays bob 25.00: one append (with each account's next sequence number), then the committer");
        Ledger.on(db).apply(LedgerTransaction.transfer("alice", "bob", 2_500).withId(OperationId.of("pay-1")));
        n.reader(view(db));
        n.check(Ledger.on(db).balance("alice") == 7_500 && cache(db, "bob") == 12_500, "alice 75.00, bob 125.00");

        n.step("alice pays bob 10.00 more; the process dies after advancing alice's cache, before bob's (write #3)");
        try {
            Ledger.on(FaultInjector.at(3, FaultMode.CRASH_AFTER).wrap(db))
                    .apply(LedgerTransaction.transfer("alice", "bob", 1_000).withId(OperationId.of("pay-2")));
            n.problem("the crash was not injected");
        } catch (InjectedCrash crash) {
            n.crashed(crash.getMessage());
        }
        n.reader(view(db));
        n.check(Ledger.on(db).balance("alice") == 6_500 && Ledger.on(db).balance("bob") == 13_500,
                "balance() exact on both accounts even with bob's cache behind");
        n.check(cache(db, "bob") == 12_500, "bob's cache to lag until the committer runs");

        n.step("a fresh process runs the committer: it finishes pay-2 in log order (an appended transaction is decided by"
                + " its place in the log, so recovery only goes forward); reconcile proves each cache");
        Ledger.on(db).recover(Duration.ZERO);
        n.reader(view(db));
        StringBuilder proven = new StringBuilder("reconcile:");
        for (String account : List.of("alice", "bob")) {
            var report = Ledger.on(db).reconcile(account, false);
            proven.append(' ').append(account).append(" log ").append(report.logBalance()).append(" = cache ")
                    .append(report.cacheBalance()).append(report.problems().isEmpty() ? "" : " " + report.problems())
                    .append(';');
            n.check(report.problems().isEmpty(), account + "'s cache to match its log");
        }
        n.note(proven.substring(0, proven.length() - 1));
        n.check(cache(db, "alice") == 6_500 && cache(db, "bob") == 13_500, "both caches caught up");
    }

    private static long cache(MongoDatabase db, String account) {
        return db.getCollection("ledgerAccounts").find(Filters.eq("_id", account)).first().getLong("balance");
    }

    private static String view(MongoDatabase db) {
        Ledger ledger = Ledger.on(db);
        return String.format("balance() alice %.2f bob %.2f; cached alice %.2f bob %.2f",
                ledger.balance("alice") / 100.0, ledger.balance("bob") / 100.0, cache(db, "alice") / 100.0,
                cache(db, "bob") / 100.0);
    }
}
