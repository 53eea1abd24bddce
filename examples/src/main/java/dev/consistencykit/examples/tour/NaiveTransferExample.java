package dev.consistencykit.examples.tour;

import java.util.List;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.InjectedCrash;

/**
 * The opening act: a transfer written as two plain updates, and a crash between them that loses money for good. What
 * every pattern after it is for.
 */
public final class NaiveTransferExample implements TourExample {

    @Override
    public String pattern() {
        return "naive";
    }

    @Override
    public String title() {
        return "The naive way: a transfer as two plain updates";
    }

    @Override
    public void run(MongoDatabase db, Narration n) {
        n.step("setup: alice has 100.00, bob 50.00");
        db.getCollection("accounts").insertMany(List.of(new Document("_id", "alice").append("balance", 10_000L),
                new Document("_id", "bob").append("balance", 5_000L)));
        n.step("alice pays bob 25.00: debit alice, then credit bob; the process dies between the two");
        MongoDatabase dying = FaultInjector.at(1, FaultMode.CRASH_AFTER).wrap(db);
        try {
            dying.getCollection("accounts").updateOne(Filters.eq("_id", "alice"), Updates.inc("balance", -2_500L));
            dying.getCollection("accounts").updateOne(Filters.eq("_id", "bob"), Updates.inc("balance", 2_500L));
            n.problem("the crash was not injected");
        } catch (InjectedCrash crash) {
            n.crashed(crash.getMessage());
        }
        long total = balance(db, "alice") + balance(db, "bob");
        n.reader(String.format("alice %.2f, bob %.2f: %.2f of 150.00", balance(db, "alice") / 100.0,
                balance(db, "bob") / 100.0, total / 100.0));
        n.note("25.00 is gone for good: nothing says a transfer was under way. Each pattern below closes that gap.");
        n.check(total == 12_500, "the naive transfer to lose 25.00");
    }

    private static long balance(MongoDatabase db, String account) {
        return db.getCollection("accounts").find(Filters.eq("_id", account)).first().getLong("balance");
    }
}
