package dev.consistencykit.logreconciliation;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;

import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.ServerClock;

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
