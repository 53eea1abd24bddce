package dev.consistencykit.examples.samples;

import java.time.Duration;
import java.util.List;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.twophase.ConsistentRead;
import dev.consistencykit.twophase.Participant;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.twophase.TwoPhaseTransaction;

/** The README's two-phase commit sample. */
public final class TwoPhaseSample {

    private TwoPhaseSample() {
    }

    /** Two accounts, a stock item and an order. */
    public static void seed(MongoDatabase db) {
        db.getCollection("accounts").insertMany(List.of(new Document("_id", "alice").append("balance", 10_000L),
                new Document("_id", "bob").append("balance", 0L)));
        db.getCollection("stock").insertOne(new Document("_id", "sku-1").append("free", 5));
        db.getCollection("orders").insertOne(new Document("_id", "order-42").append("status", "new"));
    }

    /** Runs the sample on {@code db}. */
    public static void run(MongoDatabase db) {
        // README:start
        TwoPhaseCommit payments = TwoPhaseCommit.builder(db).name("payments").build();  // accounts: {_id, balance}
        payments.ensureIndexes();
        payments.transfer(Transfer.of(OperationId.of("t-1001"), "alice", "bob", 2_500)); // 7 round trips; typed
                                                                                         // InsufficientFundsException etc.
        payments.apply(TwoPhaseTransaction.of(OperationId.of("order-42"),                // any N participants
                Participant.on("stock", "sku-1").when(Filters.gte("free", 2))
                        .prepare(Updates.inc("free", -2)).rollback(Updates.inc("free", 2)),
                Participant.on("orders", "order-42").when(Filters.eq("status", "new"))
                        .commit(Updates.set("status", "paid"))));
        payments.recover(Duration.ofMinutes(1));   // at start-up and periodically, from any number of processes
        payments.prune();                          // drop terminal transactions after retention (24 h)
        ConsistentRead view = payments.readConsistent("accounts", List.of("alice", "bob"));   // never waits
        // README:end
        Samples.check(view.isResolved() && view.documents().get(0).getLong("balance") == 7_500L,
                "alice settled after the transfer: " + view);
        Samples.check("paid".equals(db.getCollection("orders").find().first().getString("status")), "order paid");
    }
}
