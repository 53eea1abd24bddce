package dev.consistencykit.logreconciliation.internal;

import static dev.consistencykit.logreconciliation.internal.LedgerSchema.ACCOUNT;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.BALANCE;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.CACHE_BAL;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.CHANGES;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.SEQ;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.archiveKey;

import java.time.Duration;
import java.util.Date;
import java.util.List;

import org.bson.Document;

import dev.consistencykit.core.ServerClock;

/** The archiver: committed transactions past retention moved from the log to the archive. */
public final class LedgerArchiver {

    private final LedgerStore store;
    private final LedgerCounters counters;
    private final ServerClock clock;

    LedgerArchiver(LedgerStore store, LedgerCounters counters, ServerClock clock) {
        this.store = store;
        this.counters = counters;
        this.clock = clock;
    }

    /**
     * Moves committed transactions appended longer than {@code olderThan} ago to the archive: copy, raise each
     * account's checkpoint, delete. Balances stay exact (they start from the cache, which is at or past every
     * checkpoint); reconcile folds from the checkpoint. Transactions their appender has not released yet
     * ({@link dev.consistencykit.core.spi.RecordReleases}) stay in the ledger.
     */
    public int archive(Duration olderThan) {
        store.close();
        Date cutoff = clock.cutoff(olderThan);
        int moved = 0;
        // a transaction its appender has not released may still be written again by that appender's retry: kept
        List<Document> old = store.archivable(cutoff);
        for (Document tx : old) {
            Object id = tx.get("_id");
            Document copy = new Document(tx);
            copy.put("_id", archiveKey(tx));
            store.archiveCopy(id, copy);
            for (Document c : tx.getList(CHANGES, Document.class)) {
                String account = c.getString(ACCOUNT);
                long seq = c.getLong(SEQ);
                Document checkpoint = new Document(SEQ, seq).append(BALANCE, c.getLong(CACHE_BAL));
                store.raiseCheckpoint(account, seq, checkpoint);
            }
            store.deleteArchived(id);
            moved++;
            counters.archived.increment();
        }
        return moved;
    }

}
