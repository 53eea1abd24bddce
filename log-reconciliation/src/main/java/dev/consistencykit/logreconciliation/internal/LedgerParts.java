package dev.consistencykit.logreconciliation.internal;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ServerClock;
import dev.consistencykit.logreconciliation.LedgerConfig;
import dev.consistencykit.logreconciliation.LedgerListener;

/**
 * The parts of one ledger, created and wired in one place; the entry type calls each directly.
 *
 * <p>The ledger protocol: append as one document with per-account sequence numbers; commit by deciding the transaction
 * once (cancel by the overdraft rule or keep, recording every change's {@code cacheBal}), then advancing each account's
 * cache by compare-and-set on its seqId, then marking the transaction committed. Every step is idempotent and safe
 * from many processes.
 *
 * @param store      the only owner of the collections: the writes by name, the indexes, the records held
 * @param appends    a transaction checked, numbered in each account's log and appended
 * @param committer  transactions decided in each account's order and committed; recovery
 * @param reads      cancel, reversal, balances and entries
 * @param reconciler an account's caches proved against its changes
 * @param archiver   committed transactions moved to the archive
 * @param audit      the operator's reads: describe, interrupted, status, counters
 */
public record LedgerParts(LedgerStore store, LedgerAppends appends, LedgerCommitter committer, LedgerReads reads,
                          LedgerReconciler reconciler, LedgerArchiver archiver, LedgerAudit audit) {

    /** The parts over {@code database} (already checked for an acknowledged write concern). */
    public static LedgerParts of(LedgerConfig config, MongoDatabase database, ServerClock clock,
                                 LedgerListener listener) {
        LedgerStore store = new LedgerStore(config, database);
        LedgerCounters counters = new LedgerCounters();
        LedgerHeads heads = new LedgerHeads();
        LedgerAppends appends = new LedgerAppends(config, store, heads, counters, listener);
        LedgerReads reads = new LedgerReads(config, store, appends, new ConsistentBalances(config.name(), store));
        return new LedgerParts(store, appends,
                new LedgerCommitter(config, store, appends, heads, counters, clock, listener), reads,
                new LedgerReconciler(config, store, listener), new LedgerArchiver(store, counters, clock),
                new LedgerAudit(config, store, reads, counters, clock));
    }
}
