package dev.consistencykit.logreconciliation;

import java.util.List;
import java.util.Objects;

/**
 * What {@link Ledger#reconcile} found for one account: its log folded from its checkpoint (or seqId 1) compared with
 * its cache and every recorded {@code cacheBal}.
 *
 * @param account      the account
 * @param logHead      the highest seqId in the log
 * @param cacheSeqId   the cache's seqId
 * @param cacheBalance the cache's balance
 * @param logBalance   the fold of the committed valid changes up to the cache's seqId
 * @param balance      the fold of every valid change, committed or not (what {@code balance()} returns)
 * @param problems     every mismatch: a number the cache passed that the log lacks, a number held twice, a wrong
 *                     {@code cacheBal}, a cache ahead of the log, a wrong cache balance. Past the cache, numbers not in
 *                     the log yet and changes not decided yet are in flight (the committer reaches them in order), not
 *                     problems; no {@code cacheBal} after the first of them is checked, since the fold cannot prove it
 * @param repaired     what a repair rewrote (empty unless repairing)
 */
public record ReconcileReport(String account, long logHead, long cacheSeqId, long cacheBalance, long logBalance,
                              long balance, List<String> problems, List<String> repaired) {

    /** Copies the lists. */
    public ReconcileReport {
        Objects.requireNonNull(account, "account");
        problems = List.copyOf(problems);
        repaired = List.copyOf(repaired);
    }

    /** Whether the cache and every {@code cacheBal} agree with the log. */
    public boolean consistent() {
        return problems.isEmpty();
    }
}
