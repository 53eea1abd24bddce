package dev.consistencykit.logreconciliation.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.elemMatch;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.or;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.ACCOUNT;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.BALANCE;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.CACHE_BAL;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.CHANGES;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.CHECKPOINT;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.LOG;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.SEQ;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.VALID;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.VALUE;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.checkpointSeq;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.longOf;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;

import dev.consistencykit.logreconciliation.LedgerConfig;
import dev.consistencykit.logreconciliation.ReconcileReport;

/**
 * Reconciliation: folding an account's log from its checkpoint and proving (or repairing) its cache.
 */
final class LedgerReconciler {

    private final LedgerFields fields;
    private final LedgerConfig config;

    /** The reconciler, over the shared fields only: it reads the log and repairs the caches itself. */
    LedgerReconciler(LedgerFields fields) {
        this.fields = fields;
        this.config = fields.config;
    }

    // ---------------------------------------------------------------- reconcile

    /** Folds {@code account}'s log and compares it with the cache and every recorded {@code cacheBal}. */
    public ReconcileReport reconcile(String account, boolean repair) {
        Document cache = fields.accounts.find(eq("_id", account)).first();
        long cacheSeq = longOf(cache, SEQ);
        long cacheBalance = longOf(cache, BALANCE);
        long expected = checkpointSeq(cache) + 1;
        long running = cache != null && cache.get(CHECKPOINT) instanceof Document cp ? longOf(cp, BALANCE) : 0L;
        long atCache = expected - 1 == cacheSeq ? running : Long.MIN_VALUE;
        long everything = running;
        long head = expected - 1;
        List<String> problems = new ArrayList<>();
        List<String> repaired = new ArrayList<>();
        Map<Object, Long> cacheBalRepairs = new LinkedHashMap<>();
        boolean sequenceBroken = false;
        long from = expected - 1;
        try (MongoCursor<Document> changes = fields.ledger.aggregate(List.of(
                Aggregates.match(elemMatch(CHANGES, and(eq(ACCOUNT, account), gt(SEQ, from)))),
                Aggregates.unwind("$" + CHANGES),
                Aggregates.match(and(eq(CHANGES + "." + ACCOUNT, account), gt(CHANGES + "." + SEQ, from))),
                Aggregates.sort(Sorts.ascending(CHANGES + "." + SEQ)))).iterator()) {
            while (changes.hasNext()) {
                Document d = changes.next();
                Document c = d.get(CHANGES, Document.class);
                long seq = c.getLong(SEQ);
                head = Math.max(head, seq);
                if (seq != expected) {
                    sequenceBroken = true;
                    problems.add(seq < expected ? "seqId " + seq + " appears twice (transaction " + d.get("_id") + ")"
                            : "gap: seqIds " + expected + "…" + (seq - 1) + " are missing before transaction "
                            + d.get("_id"));
                    expected = seq;
                }
                expected++;
                boolean valid = VALID.equals(d.getString("state"));
                if (valid) {
                    everything += c.getLong(VALUE);
                }
                if (c.get(CACHE_BAL) == null) {
                    continue;   // not decided yet
                }
                if (valid) {
                    running += c.getLong(VALUE);
                }
                if (c.getLong(CACHE_BAL) != running) {
                    problems.add("transaction " + d.get("_id") + " records cacheBal " + c.getLong(CACHE_BAL)
                            + " at seqId " + seq + "; the log says " + running);
                    if (repair) {
                        cacheBalRepairs.put(List.of(d.get("_id"), seq), running);
                    }
                }
                if (seq == cacheSeq) {
                    atCache = running;
                }
            }
        }
        if (cacheSeq > head) {
            problems.add("the cache is ahead of the log: seqId " + cacheSeq + ", the log ends at " + head);
        } else if (atCache != Long.MIN_VALUE && atCache != cacheBalance) {
            problems.add("the cache holds balance " + cacheBalance + " at seqId " + cacheSeq + "; the log says "
                    + atCache);
            if (repair && !sequenceBroken) {
                // guarded by everything the fold started from: a cache the committer advanced, or a checkpoint an
                // archiver raised meanwhile (the fold then missed what it moved), leaves this repair unapplied
                long fixed = atCache;
                Bson checkpoint = cache.get(CHECKPOINT) == null ? exists(CHECKPOINT, false)
                        : eq(CHECKPOINT, cache.get(CHECKPOINT));
                if (fields.accounts.updateOne(and(eq("_id", account), eq(SEQ, cacheSeq), eq(BALANCE, cacheBalance),
                        checkpoint), Updates.set(BALANCE, fixed)).getMatchedCount() == 1) {
                    repaired.add("cache balance set to " + fixed);
                }
            }
        }
        if (!cacheBalRepairs.isEmpty()) {
            repairCacheBals(account, cache, sequenceBroken, cacheBalRepairs, repaired);
        }
        for (String problem : problems) {
            LOG.warn("[{}] reconcile {}: {}", config.name(), account, problem);
            fields.notify(() -> fields.listener.onMismatch(account, problem));
        }
        return new ReconcileReport(account, head, cacheSeq, cacheBalance,
                atCache == Long.MIN_VALUE ? running : atCache, everything, problems, repaired);
    }

    /**
     * Rewrites the {@code cacheBal}s the fold found wrong, only when the fold can be trusted: its seqIds ran without a
     * gap, and the account's checkpoint is where the fold started (an archiver that moved entries meanwhile raised
     * it, and the fold then summed without them).
     */
    void repairCacheBals(String account, Document cache, boolean sequenceBroken, Map<Object, Long> fixes,
                         List<String> repaired) {
        Document now = fields.accounts.find(eq("_id", account)).first();
        if (sequenceBroken || !java.util.Objects.equals(now == null ? null : now.get(CHECKPOINT),
                cache == null ? null : cache.get(CHECKPOINT))) {
            LOG.warn("[{}] reconcile {}: the log moved while it was read; nothing repaired, run it again",
                    config.name(), account);
            return;
        }
        fixes.forEach((key, fixed) -> {
            List<?> at = (List<?>) key;
            long seq = (Long) at.get(1);
            fields.ledger.updateOne(and(eq("_id", at.get(0)), elemMatch(CHANGES, and(eq(ACCOUNT, account), eq(SEQ,
                    seq)))),
                    Updates.set(CHANGES + ".$." + CACHE_BAL, fixed));
            repaired.add("cacheBal of seqId " + seq + " set to " + fixed);
        });
    }

    /** Accounts whose log has a hole: found by one pass over every change. */
    public List<String> accountsWithGaps() {
        Map<String, Long> checkpoints = new HashMap<>();
        fields.accounts.find(exists(CHECKPOINT)).forEach(d -> checkpoints.put(d.getString("_id"), checkpointSeq(d)));
        List<String> gaps = new ArrayList<>();
        fields.ledger.aggregate(List.of(Aggregates.unwind("$" + CHANGES), Aggregates.group("$" + CHANGES + "."
                + ACCOUNT,
                Accumulators.sum("n", 1), Accumulators.max("max", "$" + CHANGES + "." + SEQ),
                Accumulators.min("min", "$" + CHANGES + "." + SEQ)))).forEach(d -> {
                    long n = ((Number) d.get("n")).longValue();
                    long min = ((Number) d.get("min")).longValue();
                    long max = ((Number) d.get("max")).longValue();
                    long from = checkpoints.getOrDefault(d.getString("_id"), 0L) + 1;
                    if (min > from || max - min + 1 != n) {
                        gaps.add(d.getString("_id"));
                    }
                });
        return gaps;
    }
}
