package dev.consistencykit.twophase;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.testkit.Accounts;

/** Accounts for the tests, and the invariants of a bank run by two-phase commit, read back from the server. */
final class Bank {

    static final String ACCOUNTS = TwoPhaseConfig.DEFAULT_ACCOUNTS_COLLECTION;
    static final String TRANSACTIONS = TwoPhaseConfig.DEFAULT_TRANSACTIONS_COLLECTION;

    private Bank() {
    }

    static Map<String, Long> accounts(int n, long balance) {
        return Accounts.named(n, balance);
    }

    static void seed(MongoDatabase db, Map<String, Long> accounts) {
        Accounts.seed(db, ACCOUNTS, accounts);
    }

    static long balance(MongoDatabase db, String account) {
        return db.getCollection(ACCOUNTS).find(new Document("_id", account)).first().getLong("balance");
    }

    /**
     * Every invariant: total conserved, (optionally) no negative balance, each account equal to its initial balance
     * plus the effect of exactly the transactions that ended {@code done}, every transaction terminal with a legal
     * history, no participant still marked.
     */
    static List<String> invariants(MongoDatabase db, Map<String, Long> initial, boolean noNegative) {
        TwoPhaseAudit audit = TwoPhaseCommit.on(db).audit(Accounts.BALANCE);
        List<String> problems = new ArrayList<>(audit.problemsWhenQuiescent());
        problems.addAll(Accounts.checkMoney(Accounts.balances(db, ACCOUNTS), initial,
                audit.committedEffectsOn(ACCOUNTS), noNegative));
        return problems;
    }
}
