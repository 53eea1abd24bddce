package dev.consistencykit.logreconciliation.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.consistencykit.core.spi.Listeners;
import dev.consistencykit.logreconciliation.LedgerListener;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.or;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.BALANCE;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.CACHE_BAL;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.CHANGES;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.CHECKPOINT;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.SEQ;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.VALID;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.VALUE;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.checkpointSeq;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.longOf;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.client.MongoCursor;

import dev.consistencykit.logreconciliation.LedgerConfig;
import dev.consistencykit.logreconciliation.ReconcileReport;

/**
 * Reconciliation: folding an account's log from its checkpoint and proving (or repairing) its cache.
 */
public final class LedgerReconciler {

    private static final Logger LOG = LoggerFactory.getLogger(LedgerReconciler.class);

    private final LedgerConfig config;
    private final LedgerStore store;
    private final LedgerListener listener;

    /** The reconciler, through the store: it reads the log and repairs the caches itself. */
    LedgerReconciler(LedgerConfig config, LedgerStore store, LedgerListener listener) {
        this.config = config;
        this.store = store;
        this.listener = listener;
    }

    // ---------------------------------------------------------------- reconcile

    /** Folds {@code account}'s log and compares it with the cache and every recorded {@code cacheBal}. */
    public ReconcileReport reconcile(String account, boolean repair) {
        Document cache = store.account(account);
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
        // Past the cache, the log may hold numbers not appended yet (reserved by an append in flight, or left by a
        // transaction moved to fresh ones, until filled) and changes not decided yet: the committer reaches them in
        // order, so they are in flight, not problems. From the first of them on, this fold cannot prove a decided
        // change either (read later than the undecided one before it, on a server whose cursor is no snapshot, it
        // counts what the fold did not), so it checks no cacheBal past it.
        boolean proving = true;
        long from = expected - 1;
        try (MongoCursor<Document> changes = store.changesInOrder(account, from)) {
            while (changes.hasNext()) {
                Document d = changes.next();
                Document c = d.get(CHANGES, Document.class);
                long seq = c.getLong(SEQ);
                head = Math.max(head, seq);
                if (seq < expected) {
                    sequenceBroken = true;
                    problems.add("seqId " + seq + " appears twice (transaction " + d.get("_id") + ")");
                } else if (seq > expected && expected <= cacheSeq) {
                    sequenceBroken = true;
                    problems.add("gap: seqIds " + expected + "…" + (seq - 1) + " are missing before transaction "
                            + d.get("_id") + ", and the cache passed them (seqId " + cacheSeq + ")");
                } else if (seq > expected) {
                    proving = false;
                }
                if (seq >= expected) {
                    expected = seq + 1;
                }
                boolean valid = VALID.equals(d.getString("state"));
                if (valid) {
                    everything += c.getLong(VALUE);
                }
                if (c.get(CACHE_BAL) == null) {
                    proving &= seq <= cacheSeq;
                    continue;   // not decided yet
                }
                if (!proving) {
                    continue;
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
                if (store.repairCacheBalance(account, cacheSeq, cacheBalance, checkpoint, fixed)) {
                    repaired.add("cache balance set to " + fixed);
                }
            }
        }
        if (!cacheBalRepairs.isEmpty()) {
            repairCacheBals(account, cache, sequenceBroken, cacheBalRepairs, repaired);
        }
        for (String problem : problems) {
            LOG.warn("[{}] reconcile {}: {}", config.name(), account, problem);
            Listeners.call(config.name(), () -> listener.onMismatch(account, problem));
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
        Document now = store.account(account);
        if (sequenceBroken || !java.util.Objects.equals(now == null ? null : now.get(CHECKPOINT),
                cache == null ? null : cache.get(CHECKPOINT))) {
            LOG.warn("[{}] reconcile {}: the log moved while it was read; nothing repaired, run it again",
                    config.name(), account);
            return;
        }
        fixes.forEach((key, fixed) -> {
            List<?> at = (List<?>) key;
            long seq = (Long) at.get(1);
            store.repairCacheBal(at.get(0), account, seq, fixed);
            repaired.add("cacheBal of seqId " + seq + " set to " + fixed);
        });
    }

    /** Accounts whose log has a hole: found by one pass over every change. */
    public List<String> accountsWithGaps() {
        Map<String, Long> checkpoints = store.checkpoints();
        List<String> gaps = new ArrayList<>();
        store.seqRanges().forEach(d -> {
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
