package dev.consistencykit.logreconciliation.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.elemMatch;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lte;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.ACCOUNT;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.CACHE_BAL;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.CANCELED;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.CHANGES;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.SEQ;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.TYPE;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.UNCOMMITTED;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.VALID;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.VALUE;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.fromArchive;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.longOf;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.bson.Document;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.logreconciliation.Change;
import dev.consistencykit.logreconciliation.ChangeType;
import dev.consistencykit.logreconciliation.LedgerConfig;
import dev.consistencykit.logreconciliation.LedgerEntry;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.logreconciliation.TransactionCommittedException;
import dev.consistencykit.logreconciliation.UnknownTransactionException;
import dev.consistencykit.logreconciliation.internal.LedgerEngine.Prepared;

/**
 * Cancel and reverse, and the reads: balances, entries and the consistent multi-account read.
 */
final class LedgerReads {

    private final LedgerFields fields;
    private final LedgerConfig config;
    private final LedgerAppends appends;

    /** Cancel, reversal and the reads, over the shared fields and the appends (a reversal is appended). */
    LedgerReads(LedgerFields fields, LedgerAppends appends) {
        this.fields = fields;
        this.config = fields.config;
        this.appends = appends;
    }

    // ---------------------------------------------------------------- cancel and reverse

    /** Cancels {@code id} if the committer has not decided it yet. */
    public void cancel(Object id) {
        Ids.operationId(config.name(), "id", id);
        long matched = config.retryPolicy().execute(config.name(), id, "cancel", () -> fields.ledger.updateOne(
                and(eq("_id", id), eq("proc", UNCOMMITTED), exists("decided", false)),
                Updates.combine(Updates.set("state", CANCELED), Updates.set("reason", "canceled")))
                .getMatchedCount());
        if (matched > 0) {
            return;
        }
        Document tx = fields.byId(id);
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
        Document tx = fields.byId(id);
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
        return fields.consistentBalances.read(accounts);
    }

    /**
     * See {@link dev.consistencykit.logreconciliation.Ledger#balance}: the consistent read of one account, so that an
     * archiver moving a transaction the cache passed meanwhile cannot make it count for nothing.
     */
    public long balance(String account) {
        return fields.consistentBalances.read(List.of(account)).get(account);
    }

    /**
     * The committed changes of {@code account} after {@code afterSeq}, in order, at most {@code limit}: every seqId up
     * to the account cache's (which only ever covers decided changes), without a gap.
     */
    public List<LedgerEntry> entries(String account, long afterSeq, int limit) {
        Document cache = fields.accounts.find(eq("_id", account)).projection(Projections.include(SEQ)).first();
        long upTo = Math.min(longOf(cache, SEQ), afterSeq + limit);
        if (upTo <= afterSeq) {
            return List.of();
        }
        Map<Long, LedgerEntry> found = new HashMap<>();
        for (MongoCollection<Document> source : List.of(fields.ledger, fields.archive)) {
            if (found.size() == upTo - afterSeq) {
                break;
            }
            source.aggregate(List.of(
                    Aggregates.match(elemMatch(CHANGES, and(eq(ACCOUNT, account), gt(SEQ, afterSeq),
                            lte(SEQ, upTo)))),
                    Aggregates.unwind("$" + CHANGES),
                    Aggregates.match(and(eq(CHANGES + "." + ACCOUNT, account), gt(CHANGES + "." + SEQ, afterSeq),
                            lte(CHANGES + "." + SEQ, upTo))))).forEach(d -> {
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
        List<String> ids = new ArrayList<>();
        // sorted by _id: an unsorted scan of several batches returns some documents twice on DocumentDB
        fields.accounts.find(gt(SEQ, 0L)).projection(Projections.include("_id"))
                .sort(com.mongodb.client.model.Sorts.ascending("_id")).forEach(d -> ids.add(d.getString("_id")));
        return ids;
    }
}
