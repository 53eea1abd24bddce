package dev.consistencykit.logreconciliation.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.in;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.ACCOUNT;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.CACHE_BAL;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.CANCELED;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.CHANGES;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.SEQ;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.TYPE;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.VALID;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.VALUE;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.fromArchive;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.longOf;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.bson.Document;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.logreconciliation.Change;
import dev.consistencykit.logreconciliation.ChangeType;
import dev.consistencykit.logreconciliation.LedgerConfig;
import dev.consistencykit.logreconciliation.LedgerEntry;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.logreconciliation.TransactionCommittedException;
import dev.consistencykit.logreconciliation.UnknownTransactionException;
import dev.consistencykit.logreconciliation.internal.LedgerAppends.Prepared;

/**
 * Cancel and reverse, and the reads: balances, entries and the consistent multi-account read.
 */
public final class LedgerReads {

    private final LedgerConfig config;
    private final LedgerStore store;
    private final LedgerAppends appends;
    private final ConsistentBalances consistentBalances;

    /** Cancel, reversal and the reads, through the store, with the appends (a reversal is appended). */
    LedgerReads(LedgerConfig config, LedgerStore store, LedgerAppends appends, ConsistentBalances balances) {
        this.config = config;
        this.store = store;
        this.appends = appends;
        this.consistentBalances = balances;
    }

    // ---------------------------------------------------------------- cancel and reverse

    /** Cancels {@code id} if the committer has not decided it yet. */
    public void cancel(Object id) {
        Ids.operationId(config.name(), "id", id);
        long matched = store.cancel(id);
        if (matched > 0) {
            return;
        }
        Document tx = store.byId(id);
        if (tx == null) {
            throw new UnknownTransactionException(config.name(), id);
        }
        if (!CANCELED.equals(tx.getString("state"))) {
            throw new TransactionCommittedException(config.name(), id);
        }
    }

    /** The compensating transaction of {@code id}, appended (idempotently) as {@code <id>:reversal}. */
    public Prepared reversalOf(Object id) {
        Ids.operationId(config.name(), "id", id);
        Document tx = store.byId(id);
        if (tx == null) {
            throw new UnknownTransactionException(config.name(), id);
        }
        List<Change> changes = new ArrayList<>();
        for (Document c : tx.getList(CHANGES, Document.class)) {
            long value = c.getLong(VALUE);
            ChangeType type = ChangeType.valueOf(c.getString(TYPE));
            changes.add(new Change(c.getString(ACCOUNT), type.reversed(), Math.abs(value)));
        }
        LedgerTransaction reversal = new LedgerTransaction(OperationId.of(id + ":reversal"), changes,
                tx.getBoolean("transfer", false));
        Prepared p = appends.prepare(reversal);
        return new Prepared(p.tx(), p.fingerprint(), id);
    }

    // ---------------------------------------------------------------- reads

    /** See {@link dev.consistencykit.logreconciliation.Ledger#balances}; {@code accounts} distinct and checked. */
    public Map<String, Long> balances(List<String> accounts) {
        return consistentBalances.read(accounts);
    }

    /**
     * See {@link dev.consistencykit.logreconciliation.Ledger#balance}: the consistent read of one account, so that an
     * archiver moving a transaction the cache passed meanwhile cannot make it count for nothing.
     */
    public long balance(String account) {
        return consistentBalances.read(List.of(account)).get(account);
    }

    /**
     * The committed changes of {@code account} after {@code afterSeq}, in order, at most {@code limit}: every seqId up
     * to the account cache's (which only ever covers decided changes), without a gap.
     */
    public List<LedgerEntry> entries(String account, long afterSeq, int limit) {
        Document cache = store.account(account);
        long upTo = Math.min(longOf(cache, SEQ), afterSeq + limit);
        if (upTo <= afterSeq) {
            return List.of();
        }
        Map<Long, LedgerEntry> found = new HashMap<>();
        for (boolean archived : List.of(false, true)) {
            if (found.size() == upTo - afterSeq) {
                break;
            }
            store.changesOf(account, afterSeq, upTo, archived).forEach(d -> {
                                Document c = d.get(CHANGES, Document.class);
                                long value = c.getLong(VALUE);
                                found.putIfAbsent(c.getLong(SEQ), new LedgerEntry(new OperationId(
                                        fromArchive(d).get("_id")),
                                        account, c.getLong(SEQ), ChangeType.valueOf(c.getString(TYPE)),
                                        Math.abs(value), VALID.equals(d.getString("state")), c.getLong(CACHE_BAL)));
                            });
        }
        List<LedgerEntry> entries = new ArrayList<>();
        for (long s = afterSeq + 1; s <= upTo; s++) {
            LedgerEntry e = found.get(s);
            if (e == null) {
                break;  // not readable yet (archived between our reads): the next poll continues from here
            }
            entries.add(e);
        }
        return entries;
    }

    /** Accounts with a cache document, for a cursor over all accounts. */
    public List<String> accountIds() {
        return store.accountIds();
    }
}
