package dev.consistencykit.testkit;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.spi.Ids;

/**
 * Bank accounts for workloads and the invariants of money, read back from the server: the total is conserved,
 * no balance is negative (where the pattern promises that), and each account holds exactly its initial balance
 * plus the effect of the operations that committed.
 *
 * <p>Accounts are documents {@code {_id: "a0", balance: <long minor units>}}.
 */
public final class Accounts {

    /** The balance field. */
    public static final String BALANCE = "balance";

    private Accounts() {
    }

    /** Accounts {@code a0..a(n-1)}, each holding {@code balance}, in order. */
    public static Map<String, Long> named(int n, long balance) {
        Map<String, Long> accounts = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            accounts.put("a" + i, balance);
        }
        return accounts;
    }

    /** Inserts the accounts into {@code collection}. */
    public static void seed(MongoDatabase db, String collection, Map<String, Long> balances) {
        List<Document> docs = new ArrayList<>();
        balances.forEach((id, balance) -> docs.add(new Document("_id", id).append(BALANCE, balance)));
        db.getCollection(collection).insertMany(docs);
    }

    /** Every account's balance, read back. */
    public static Map<Object, Long> balances(MongoDatabase db, String collection) {
        Map<Object, Long> balances = new TreeMap<>(Ids.idOrder());
        for (Document d : db.getCollection(collection).find()) {
            balances.put(d.get("_id"), ((Number) d.get(BALANCE)).longValue());
        }
        return balances;
    }

    /**
     * The money invariants.
     *
     * @param actual     balances read back
     * @param initial    the balances seeded
     * @param committed  the net change committed operations made to each account (absent: none)
     * @param noNegative whether a negative balance is a violation
     * @return one message per violation
     */
    public static List<String> checkMoney(Map<Object, Long> actual, Map<String, Long> initial,
                                          Map<Object, Long> committed, boolean noNegative) {
        List<String> problems = new ArrayList<>();
        long total = 0;
        for (Map.Entry<Object, Long> e : actual.entrySet()) {
            long balance = e.getValue();
            total += balance;
            if (noNegative && balance < 0) {
                problems.add("account " + e.getKey() + " is negative: " + balance);
            }
            Long start = initial.get(String.valueOf(e.getKey()));
            long expected = (start == null ? 0 : start) + committed.getOrDefault(e.getKey(), 0L);
            if (balance != expected) {
                problems.add("account " + e.getKey() + " holds " + balance + ", the committed operations say "
                        + expected);
            }
        }
        long initialTotal = initial.values().stream().mapToLong(Long::longValue).sum();
        if (total != initialTotal) {
            problems.add("total " + total + " != initial total " + initialTotal);
        }
        if (actual.size() != initial.size()) {
            problems.add(actual.size() + " accounts, " + initial.size() + " seeded");
        }
        return problems;
    }
}
