package dev.consistencykit.logreconciliation.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.elemMatch;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.or;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.bson.Document;
import org.bson.conversions.Bson;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.ServerUnavailableException;
import dev.consistencykit.core.spi.Values;

/**
 * Several balances that count every transaction entirely or not at all: the caches, the log entries after them (and
 * undecided ones, whatever their number), then the caches again. Each account's balance is its cache plus its later
 * valid changes, as {@code balance()} computes it; what makes the set consistent is that the log read is one query
 * whose documents are whole transactions, and that every number a cache moved over between the two cache reads was
 * seen in that query (so no transaction left the log, to the archive or to fresh numbers, while it was read). When
 * one was not, the read starts again.
 */
final class ConsistentBalances {

    /** Enough for any schedule but a committer and an archiver outrunning every read. */
    static final int MAX_ATTEMPTS = 50;

    private final String instance;
    private final LedgerStore store;

    ConsistentBalances(String instance, LedgerStore store) {
        this.instance = instance;
        this.store = store;
    }

    /** The balances of {@code names} (distinct, checked), in their order. Three round trips when nothing moved. */
    Map<String, Long> read(List<String> names) {
        for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
            Map<String, Document> before = caches(names);
            Map<String, Long> balances = new LinkedHashMap<>();
            Map<String, Set<Long>> seen = new HashMap<>();
            for (String name : names) {
                balances.put(name, LedgerSchema.longOf(before.get(name), LedgerSchema.BALANCE));
                seen.put(name, new HashSet<>());
            }
            for (Document tx : later(names, before)) {
                boolean valid = LedgerSchema.VALID.equals(tx.get("state"));
                boolean decided = tx.getBoolean("decided", false);
                for (Object element : Values.arrayOf(tx, LedgerSchema.CHANGES)) {
                    if (!(element instanceof Document change)
                            || !(change.get(LedgerSchema.ACCOUNT) instanceof String account)
                            || !balances.containsKey(account)
                            || !(change.get(LedgerSchema.SEQ) instanceof Number seqNumber)) {
                        continue;
                    }
                    long seq = seqNumber.longValue();
                    seen.get(account).add(seq);
                    long cacheSeq = LedgerSchema.longOf(before.get(account), LedgerSchema.SEQ);
                    if (valid && (seq > cacheSeq || !decided) && change.get(LedgerSchema.VALUE) instanceof Number v) {
                        balances.put(account, exactSum(account, balances.get(account), v.longValue()));
                    }
                }
            }
            Map<String, Document> after = caches(names);
            if (nothingLeftTheLog(names, before, after, seen)) {
                return balances;
            }
        }
        throw new ServerUnavailableException(instance, names, "no consistent read of " + names.size()
                + " balances in " + MAX_ATTEMPTS + " attempts: the committer moved a cache over entries that left the"
                + " log while they were read, every time", null);
    }

    /** A balance plus a change, never wrapped past the range of a long (the committer cancels such a change). */
    private long exactSum(String account, long balance, long value) {
        try {
            return Math.addExact(balance, value);
        } catch (ArithmeticException e) {
            throw new ConsistencyException(instance, account, "the balance of account " + account + " (" + balance
                    + ") and a change of " + value + " appended to it pass the range of a 64-bit integer; the"
                    + " committer cancels that change", e);
        }
    }

    private Map<String, Document> caches(List<String> names) {
        return store.accounts(names.get(0), "read account caches", new java.util.LinkedHashSet<>(names),
                LedgerSchema.SEQ, LedgerSchema.BALANCE);
    }

    private List<Document> later(List<String> names, Map<String, Document> caches) {
        List<Bson> beyond = new ArrayList<>();
        beyond.add(exists("decided", false));
        for (String name : names) {
            beyond.add(elemMatch(LedgerSchema.CHANGES, and(eq(LedgerSchema.ACCOUNT, name),
                    gt(LedgerSchema.SEQ, LedgerSchema.longOf(caches.get(name), LedgerSchema.SEQ)))));
        }
        Bson filter = and(in(LedgerSchema.CHANGES + "." + LedgerSchema.ACCOUNT, names), or(beyond));
        return store.transactions(names.get(0), "read later changes", filter);
    }

    private static boolean nothingLeftTheLog(List<String> names, Map<String, Document> before,
                                             Map<String, Document> after, Map<String, Set<Long>> seen) {
        for (String name : names) {
            long from = LedgerSchema.longOf(before.get(name), LedgerSchema.SEQ);
            long to = LedgerSchema.longOf(after.get(name), LedgerSchema.SEQ);
            if (to < from) {
                return false;   // a cache never moves back: rebuilt by reconcile meanwhile, read again
            }
            for (long seq = from + 1; seq <= to; seq++) {
                if (!seen.get(name).contains(seq)) {
                    return false;
                }
            }
        }
        return true;
    }
}
