package dev.consistencykit.cli.lab;

import java.util.List;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.InjectedCrash;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.VersionedStore;

/**
 * A database with every pattern in every state an operator meets, for {@code consistency-kit dashboard --demo} and the
 * dashboard's browser test: finished operations of each pattern, and one of each left behind by a process that died
 * mid-way (crashes injected at a write): a two-phase transfer with both accounts prepared ({@value #INTERRUPTED_TRANSFER}),
 * a job whose worker died holding it, a dead job (its error text is hostile markup, which the page must show as text),
 * a flagged master with a stale copy, an uncommitted ledger transaction, a staged change set.
 */
public final class DashboardDemo {

    /** The two-phase transfer left interrupted, alice → bob, 10.00. */
    public static final String INTERRUPTED_TRANSFER = "t-6";
    /** The dead job. */
    public static final String DEAD_JOB = "charge-1";
    /** The error that killed it: markup the page must show as text. */
    public static final String DEAD_ERROR = "card declined <img src=x onerror=\"document.title='owned'\">";
    /** The money in the two-phase accounts. */
    public static final long TOTAL = 15_000;

    private DashboardDemo() {
    }

    /** Writes the demo data into {@code db} (expected empty): six operations left unfinished, two of them jobs. */
    public static void populate(MongoDatabase db) {
        twoPhase(db);
        jobs(db);
        syncFlag(db);
        ledger(db);
        versioning(db);
    }

    private static void crash(Runnable call) {
        try {
            call.run();
            throw new IllegalStateException("the demo's crash was not injected");
        } catch (InjectedCrash expected) {
            // the process 'died' here: what it left is what the dashboard shows
        }
    }

    private static void twoPhase(MongoDatabase db) {
        db.getCollection("accounts").insertMany(List.of(new Document("_id", "alice").append("balance", 10_000L),
                new Document("_id", "bob").append("balance", 5_000L)));
        TwoPhaseCommit.on(db).ensureIndexes();
        for (int i = 1; i <= 5; i++) {
            TwoPhaseCommit.on(db).transfer(Transfer.of(OperationId.of("t-" + i), i % 2 == 0 ? "bob" : "alice",
                    i % 2 == 0 ? "alice" : "bob", 100L * i));
        }
        crash(() -> TwoPhaseCommit.on(FaultInjector.at(3, FaultMode.CRASH_AFTER).wrap(db))
                .transfer(Transfer.of(OperationId.of(INTERRUPTED_TRANSFER), "alice", "bob", 1_000)));
    }

    private static JobQueue.Builder queue(MongoDatabase db) {
        return JobQueue.builder(db).maxAttempts(1)
                .handler("ship", job -> job.applyOnce("orders", job.payload().get("order"),
                        Updates.set("shipped", true)))
                .handler("charge", job -> {
                    throw new IllegalStateException(DEAD_ERROR);
                });
    }

    private static void jobs(MongoDatabase db) {
        db.getCollection("orders").insertMany(List.of(new Document("_id", "o-1"), new Document("_id", "o-2"),
                new Document("_id", "o-3")));
        JobQueue queue = queue(db).build();
        queue.ensureIndexes();
        JobQueue.ensureEffectIndexes(db.getCollection("orders"));
        for (String order : List.of("o-1", "o-2")) {
            queue.apply(JobRequest.of("ship", new Document("order", order)).withId(OperationId.of("ship-" + order)));
        }
        queue.apply(JobRequest.of("charge", new Document("order", "o-1")).withId(OperationId.of(DEAD_JOB)));
        queue.enqueue(JobRequest.of("ship", new Document("order", "o-3")).withId(OperationId.of("ship-o-3")));
        // a worker claims it and dies holding it
        crash(() -> queue(FaultInjector.at(1, FaultMode.CRASH_AFTER).wrap(db)).build().processNext());
    }

    private static SyncFlag sync(MongoDatabase db) {
        return SyncFlag.builder(db).master("customers", "name")
                .target(SyncTarget.in("invoices", "customerId").copy("name", "customerName")).build();
    }

    private static void syncFlag(MongoDatabase db) {
        db.getCollection("customers").insertOne(new Document("_id", "ann").append("name", "Ann"));
        db.getCollection("invoices").insertMany(List.of(
                new Document("_id", "i-1").append("customerId", "ann").append("customerName", "Ann"),
                new Document("_id", "i-2").append("customerId", "ann").append("customerName", "Ann")));
        sync(db).ensureIndexes();
        sync(db).update("ann", Updates.set("name", "Ann Smith"));
        // the flag and the master are written, the copies not yet
        crash(() -> sync(FaultInjector.at(1, FaultMode.CRASH_AFTER).wrap(db)).update("ann",
                Updates.set("name", "Ann S.")));
    }

    private static void ledger(MongoDatabase db) {
        for (String account : List.of("alice", "bob")) {
            db.getCollection("ledgerAccounts").insertOne(new Document("_id", account).append("balance", 10_000L)
                    .append("seqId", 0L).append("checkpoint", new Document("seqId", 0L).append("balance", 10_000L)));
        }
        Ledger.on(db).ensureIndexes();
        Ledger.on(db).apply(LedgerTransaction.transfer("alice", "bob", 2_500).withId(OperationId.of("pay-1")));
        crash(() -> Ledger.on(FaultInjector.at(1, FaultMode.CRASH_AFTER).wrap(db))
                .apply(LedgerTransaction.transfer("alice", "bob", 1_000).withId(OperationId.of("pay-2"))));
    }

    private static void versioning(MongoDatabase db) {
        VersionedStore.on(db).ensureIndexes();
        VersionedStore.on(db).createRoot("catalogue");
        VersionedStore.on(db).commit(ChangeSet.on("catalogue", 0).put("shoes", new Document("price", 4_900L))
                .put("hats", new Document("price", 1_500L)).build());
        crash(() -> VersionedStore.on(FaultInjector.at(2, FaultMode.CRASH_AFTER).wrap(db)).commit(ChangeSet
                .on("catalogue", 1).put("shoes", new Document("price", 3_900L)).delete("hats").build()));
    }
}
