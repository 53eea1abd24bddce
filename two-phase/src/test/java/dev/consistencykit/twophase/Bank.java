package dev.consistencykit.twophase;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

/** Accounts for the tests, and the invariants of a bank, read back from the server. */
final class Bank {

    static final String ACCOUNTS = TwoPhaseConfig.DEFAULT_ACCOUNTS_COLLECTION;
    static final String TRANSACTIONS = TwoPhaseConfig.DEFAULT_TRANSACTIONS_COLLECTION;

    private Bank() {
    }

    /** Accounts a0..a(n-1), each with {@code balance}. */
    static Map<String, Long> accounts(int n, long balance) {
        Map<String, Long> accounts = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            accounts.put("a" + i, balance);
        }
        return accounts;
    }

    static void seed(MongoDatabase db, Map<String, Long> accounts) {
        List<Document> docs = new ArrayList<>();
        accounts.forEach((id, balance) -> docs.add(new Document("_id", id).append("balance", balance)));
        db.getCollection(ACCOUNTS).insertMany(docs);
    }

    static long balance(MongoDatabase db, String account) {
        return db.getCollection(ACCOUNTS).find(new Document("_id", account)).first().getLong("balance");
    }

    /**
     * Every invariant of a bank whose transactions move money with {@code $inc} on {@code balance}: total conserved,
     * (optionally) no negative balance, each account equal to its initial balance plus the effect of exactly the
     * transactions that ended {@code done}, every transaction terminal with a legal history, no unsettled marker.
     */
    static List<String> invariants(MongoDatabase db, Map<String, Long> initial, boolean noNegative) {
        List<String> problems = new ArrayList<>();
        Map<Object, Long> expected = new HashMap<>();
        initial.forEach(expected::put);
        for (Document tx : db.getCollection(TRANSACTIONS).find()) {
            String state = tx.getString("state");
            List<String> history = tx.getList("history", String.class);
            checkHistory(tx.get("_id"), history, state, problems);
            if (!TransactionState.fromStored(state).isTerminal()) {
                problems.add("transaction " + tx.get("_id") + " not terminal: " + state);
            }
            if ("done".equals(state)) {
                for (Document p : tx.getList("participants", Document.class)) {
                    long delta = inc(p.getList("prepare", Document.class)) + inc(p.getList("commit", Document.class));
                    expected.merge(p.get("id"), delta, Long::sum);
                }
            }
        }
        long total = 0;
        for (Document account : db.getCollection(ACCOUNTS).find()) {
            Object id = account.get("_id");
            long balance = account.getLong("balance");
            total += balance;
            if (noNegative && balance < 0) {
                problems.add("account " + id + " is negative: " + balance);
            }
            if (!Long.valueOf(balance).equals(expected.get(id))) {
                problems.add("account " + id + " holds " + balance + ", the done transactions say " + expected.get(id));
            }
            List<Object> pending = account.getList("pendingTransactions", Object.class, List.of());
            if (!pending.isEmpty()) {
                problems.add("account " + id + " still carries unsettled transactions " + pending);
            }
        }
        long initialTotal = initial.values().stream().mapToLong(Long::longValue).sum();
        if (total != initialTotal) {
            problems.add("total " + total + " != initial total " + initialTotal);
        }
        return problems;
    }

    private static long inc(List<Document> ops) {
        long sum = 0;
        for (Document op : ops) {
            if ("inc".equals(op.getString("op")) && "balance".equals(op.getString("path"))) {
                sum += ((Number) op.get("value")).longValue();
            }
        }
        return sum;
    }

    private static void checkHistory(Object id, List<String> history, String state, List<String> problems) {
        if (history == null || history.isEmpty()) {
            problems.add("transaction " + id + " has no history");
            return;
        }
        if (!history.get(history.size() - 1).equals(state)) {
            problems.add("transaction " + id + " history " + history + " does not end in its state " + state);
        }
        String first = history.get(0);
        if (!first.equals("initial") && !first.equals("pending")) {
            problems.add("transaction " + id + " history starts with " + first);
        }
        for (int i = 1; i < history.size(); i++) {
            TransactionState from = TransactionState.fromStored(history.get(i - 1));
            TransactionState to = TransactionState.fromStored(history.get(i));
            if (!from.canMoveTo(to)) {
                problems.add("transaction " + id + " made an illegal transition " + from + " -> " + to + " in "
                        + history);
            }
        }
    }
}
