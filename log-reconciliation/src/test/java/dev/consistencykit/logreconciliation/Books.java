package dev.consistencykit.logreconciliation;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;

/** Accounts with opening balances, and the ledger's invariants read back from the server. */
final class Books {

    static final RetryPolicy FAST_RETRY = RetryPolicy.DEFAULT.withBackoff(Duration.ofMillis(1), Duration.ofMillis(4));

    private Books() {
    }

    static Ledger.Builder ledger(MongoDatabase db) {
        return Ledger.builder(db).retryPolicy(FAST_RETRY);
    }

    /** An archiver whose clock runs a day ahead: archive(ZERO) moves every committed transaction, however fresh. */
    static Ledger archiver(MongoDatabase db) {
        return ledger(db).serverClock(ServerClock.unsynchronized(Clock.offset(Clock.systemUTC(),
                Duration.ofDays(1)))).build();
    }

    static Map<String, Long> accounts(int n, long balance) {
        Map<String, Long> accounts = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            accounts.put("a" + i, balance);
        }
        return accounts;
    }

    /** Opening balances as checkpoints: the log of each account starts after them. */
    static void seed(MongoDatabase db, Map<String, Long> opening) {
        List<Document> docs = new ArrayList<>();
        opening.forEach((account, balance) -> docs.add(new Document("_id", account).append("balance", balance)
                .append("seqId", 0L).append("checkpoint", new Document("seqId", 0L).append("balance", balance))));
        db.getCollection(LedgerConfig.DEFAULT_ACCOUNTS_COLLECTION).insertMany(docs);
    }

    /**
     * Two transfers between {@code x} and {@code y} whose numbers were reserved from counters in opposite orders, so
     * that each waits for the other: after a committed transfer of 1 from {@code x} to {@code y} ({@code x}:1,
     * {@code y}:1), {@code "<x>-to-<y>"} (5) holds {@code x}:2 and {@code y}:3 and {@code "<y>-to-<x>"} (3) holds
     * {@code y}:2 and {@code x}:3, both uncommitted. The accounts are seeded and the indexes made.
     */
    static void waitingForEachOther(MongoDatabase db, String x, String y) throws Exception {
        Ledger ledger = ledger(db).seqAllocation(SeqAllocation.COUNTER).build();
        ledger.apply(LedgerTransaction.transfer(x, y, 1));
        // x -> y reserves x's number (its write #1), then pauses before reserving y's (#2) ...
        FaultInjector pause = FaultInjector.atWrite("findOneAndUpdate", LedgerConfig.DEFAULT_ACCOUNTS_COLLECTION, 2,
                FaultMode.PAUSE);
        Ledger paused = ledger(pause.wrap(db)).seqAllocation(SeqAllocation.COUNTER).build();
        CompletableFuture<OperationId> forth = CompletableFuture.supplyAsync(() -> paused.append(
                LedgerTransaction.transfer(x, y, 5).withId(OperationId.of(x + "-to-" + y))));
        if (!pause.awaitPaused(Duration.ofSeconds(10))) {
            throw new IllegalStateException("the first transfer never reached its second reservation");
        }
        // ... while y -> x reserves y:2 and x:3
        ledger.append(LedgerTransaction.transfer(y, x, 3).withId(OperationId.of(y + "-to-" + x)));
        pause.release();
        forth.get(30, TimeUnit.SECONDS);
    }

    /** {@code opening} seeded, and a ledger on it with its indexes. */
    static Ledger ready(MongoDatabase db, Map<String, Long> opening) {
        seed(db, opening);
        Ledger ledger = ledger(db).build();
        ledger.ensureIndexes();
        return ledger;
    }

    /**
     * Every transaction committed; every account's cache, {@code cacheBal}s and {@code balance()} agree with its
     * log; no gaps; money conserved (when only transfers ran); no balance below {@code floor} if given.
     */
    /**
     * Recovery passes as maintenance runs them, until one finds nothing pending (at most 20): a pass is one call,
     * bounded by the operation timeout, and leaves to the next one a commit it had no time for or that met a
     * transient error, as on a machine busy with other tests. A test that checks invariants after "recovery" means
     * this, not one pass.
     *
     * @return the first pass's report
     */
    static dev.consistencykit.core.RecoveryReport recoverAll(Ledger ledger) {
        dev.consistencykit.core.RecoveryReport first = ledger.recover(java.time.Duration.ZERO);
        for (int pass = 0; pass < 20 && ledger.recover(java.time.Duration.ZERO).examined() > 0; pass++) {
            // left to this pass by the one before
        }
        return first;
    }

    static List<String> invariants(MongoDatabase db, Map<String, Long> opening, boolean transfersOnly, Long floor) {
        List<String> problems = new ArrayList<>();
        Ledger ledger = ledger(db).build();
        for (Document tx : db.getCollection(LedgerConfig.DEFAULT_LEDGER_COLLECTION).find(
                Filters.ne("proc", "committed"))) {
            problems.add("transaction " + tx.get("_id") + " is " + tx.get("proc"));
        }
        long total = 0;
        for (String account : opening.keySet()) {
            ReconcileReport r = ledger.reconcile(account, false);
            r.problems().forEach(p -> problems.add(account + ": " + p));
            long balance = ledger.balance(account);
            if (balance != r.balance()) {
                problems.add(account + ": balance() " + balance + ", the log folds to " + r.balance());
            }
            if (r.cacheBalance() != balance) {
                problems.add(account + ": cache " + r.cacheBalance() + " at seqId " + r.cacheSeqId() + ", balance "
                        + balance + " (head " + r.logHead() + ")");
            }
            if (floor != null && balance < floor) {
                problems.add(account + ": balance " + balance + " below the floor " + floor);
            }
            total += balance;
        }
        long opened = opening.values().stream().mapToLong(Long::longValue).sum();
        if (transfersOnly && total != opened) {
            problems.add("money not conserved: " + total + " != " + opened);
        }
        List<String> gaps = ledger.accountsWithGaps();
        if (!gaps.isEmpty()) {
            problems.add("accounts with gaps: " + gaps);
        }
        return problems;
    }
}
