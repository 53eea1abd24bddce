package dev.consistencykit.examples.samples;

import java.util.List;
import java.util.Map;

import org.bson.Document;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.spi.ConditionalUpdates;
import dev.consistencykit.core.spi.EffectMarker;
import dev.consistencykit.core.spi.GuardedResult;
import dev.consistencykit.core.spi.MarkerWrite;
import dev.consistencykit.core.spi.OnceEffects;
import dev.consistencykit.core.spi.Transition;
import dev.consistencykit.core.spi.UpdateOutcome;

/** The README's core-helpers sample. */
public final class CoreHelpersSample {

    private CoreHelpersSample() {
    }

    /** An account and a pending transaction record. */
    public static void seed(MongoDatabase db) {
        db.getCollection("accounts").insertOne(new Document("_id", "alice").append("balance", 1_000L));
        db.getCollection("transactions").insertOne(new Document("_id", "tx-1").append("state", "pending"));
    }

    /** Runs the sample on {@code db}. */
    public static void run(MongoDatabase db) {
        // README:start
        MongoCollection<Document> accounts = db.getCollection("accounts");
        MongoCollection<Document> transactions = db.getCollection("transactions");
        EffectMarker marker = EffectMarker.of("reservedTransactions", "pendingTransactions");
        String txId = "tx-1";                                  // the operation
        String attempt = OnceEffects.nonce("worker-7", 1);     // this attempt of it: owner and fencing token
        List<MarkerWrite> alice = List.of(new MarkerWrite("alice", Filters.gte("balance", 500L), Updates.inc("balance", -500L)));

        // reserve (no effect), then debit under our own reservation: exactly once, and a writer that wakes late finds
        // its reservation gone; a retry after a lost reply reads back ALREADY_APPLIED
        RetryPolicy.DEFAULT.execute("payments", txId, "reserve", () -> OnceEffects.reserve(accounts, marker, txId, attempt, alice));
        Map<Object, GuardedResult> debit = OnceEffects.apply(accounts, marker, txId, attempt, alice);
        OnceEffects.settle(accounts, marker, txId, List.of(MarkerWrite.of("alice", null)));  // nothing left on alice

        // move the transaction on, exactly one caller wins; lastModified is stamped by the server
        GuardedResult moved = ConditionalUpdates.transition(transactions, txId, Transition.of("state", "pending", "applied"));
        // README:end
        Samples.check(debit.get("alice").outcome() == UpdateOutcome.APPLIED, "alice debited: " + debit);
        Samples.check(moved.outcome() == UpdateOutcome.APPLIED, "the transaction moved: " + moved);
        Document after = accounts.find().first();
        Samples.check(after.getLong("balance") == 500L && !after.containsKey("pendingTransactions")
                && !after.containsKey("reservedTransactions"), "debited once, no marker left: " + after);
    }
}
