package dev.consistencykit.examples.tour;

import java.time.Duration;
import java.util.List;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.InjectedCrash;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;

/** Two-phase commit: a bank transfer between two accounts, all or nothing. */
public final class BankTransferExample implements TourExample {

    @Override
    public String pattern() {
        return "two-phase";
    }

    @Override
    public String title() {
        return "Two-phase commit: a bank transfer";
    }

    @Override
    public void run(MongoDatabase db, Narration n) {
        n.step("setup: alice has 100.00, bob 50.00 (integer cents)");
        db.getCollection("accounts").insertMany(List.of(new Document("_id", "alice").append("balance", 10_000L),
                new Document("_id", "bob").append("balance", 5_000L)));
        TwoPhaseCommit.on(db).ensureIndexes();

        n.step("alice pays bob 25.00: record, reserve both accounts, prepare, decide, settle, finish");
        OperationResult paid = TwoPhaseCommit.on(db).transfer(Transfer.of(OperationId.of("t-1"), "alice", "bob",
                2_500));
        n.check(paid.isCommitted(), "transfer t-1 committed");
        n.reader(view(db));
        n.check(balance(db, "alice") == 7_500 && balance(db, "bob") == 7_500, "alice 75.00 and bob 75.00");

        n.step("alice pays bob 10.00 more; the process dies right after both accounts were prepared (write #3)");
        try {
            TwoPhaseCommit.on(FaultInjector.at(3, FaultMode.CRASH_AFTER).wrap(db))
                    .transfer(Transfer.of(OperationId.of("t-2"), "alice", "bob", 1_000));
            n.problem("the crash was not injected");
        } catch (InjectedCrash crash) {
            n.crashed(crash.getMessage());
        }
        n.reader(view(db));
        n.check(balance(db, "alice") + balance(db, "bob") == 14_000,
                "10.00 in neither account while t-2 is in flight (reserved from alice, not yet credited to bob)");

        n.step("a fresh process runs recovery: it rolls the stale transfer back, because nothing had decided it yet: until the"
                + " transaction record says applied, undoing is always allowed, and the default policy prefers it");
        TwoPhaseCommit.on(db).recover(Duration.ZERO);
        n.reader(view(db));
        n.check(balance(db, "alice") + balance(db, "bob") == 15_000, "all 150.00 accounted for after recovery");
        n.check(db.getCollection("accounts").countDocuments(Filters.or(Filters.exists("pendingTransactions.0"),
                Filters.exists("reservedTransactions.0"))) == 0, "no account left marked or reserved");
    }

    private static long balance(MongoDatabase db, String account) {
        return db.getCollection("accounts").find(Filters.eq("_id", account)).first().getLong("balance");
    }

    private static String view(MongoDatabase db) {
        StringBuilder sb = new StringBuilder();
        for (Document a : db.getCollection("accounts").find()) {
            List<?> pending = a.getList("pendingTransactions", Object.class, List.of());
            sb.append(sb.length() == 0 ? "" : ", ").append(a.get("_id")).append(' ')
                    .append(String.format("%.2f", a.getLong("balance") / 100.0))
                    .append(pending.isEmpty() ? "" : " (pending " + pending + ")");
        }
        Document t2 = db.getCollection("transactions").find(Filters.eq("_id", "t-2")).first();
        return sb + (t2 == null ? "" : "; transaction t-2 " + t2.getString("state"));
    }
}
