package dev.consistencykit.logreconciliation.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Filters.or;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.ACCOUNT;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.BALANCE;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.CACHE_BAL;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.CHANGES;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.CHECKPOINT;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.COMMITTED;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.SEQ;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.UNCOMMITTED;
import static dev.consistencykit.logreconciliation.internal.LedgerFields.archiveKey;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.OperationView;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.core.spi.StateSnapshot;
import dev.consistencykit.core.spi.PatternInspection;
import dev.consistencykit.core.spi.PatternRecovery;
import dev.consistencykit.core.spi.PatternSetup;
import dev.consistencykit.logreconciliation.LedgerConfig;
import dev.consistencykit.logreconciliation.LedgerEntry;
import dev.consistencykit.logreconciliation.LedgerListener;
import dev.consistencykit.logreconciliation.LedgerMetrics;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.logreconciliation.ReconcileReport;

/**
 * The ledger protocol: append as one document with per-account sequence numbers; commit by deciding the transaction
 * once (cancel by the overdraft rule or keep, recording every change's {@code cacheBal}), then advancing each account's
 * cache by compare-and-set on its seqId, then marking the transaction committed. Every step is idempotent and safe
 * from many processes.
 */
public final class LedgerEngine implements PatternSetup, PatternRecovery, PatternInspection<LedgerMetrics> {

    /** A transaction checked and fingerprinted. */
    public record Prepared(LedgerTransaction tx, String fingerprint, Object reverses) {
    }

    /** The stored transaction once appended. */
    public record Appended(Document doc, boolean fresh) {
    }

    private final LedgerFields fields;
    private final LedgerAppends appends;
    private final LedgerCommitter committer;
    private final LedgerReads reads;
    private final LedgerReconciler reconciler;

    /**
     * The engine over {@code database} (already checked for an acknowledged write concern): the shared fields, the
     * appends of transactions, the committer that decides them in each account's order, cancel and the reads, and
     * the reconciler of an account's caches with its changes.
     */
    public LedgerEngine(LedgerConfig config, MongoDatabase database, ServerClock clock, LedgerListener listener) {
        this.fields = new LedgerFields(config, database, clock, listener);
        this.appends = new LedgerAppends(fields);
        this.committer = new LedgerCommitter(fields, appends);
        this.reads = new LedgerReads(fields, appends);
        this.reconciler = new LedgerReconciler(fields);
    }

    /** The unique sequence index, the committer's and archiver's index, and the archive's. */
    @Override
    public void ensureIndexes() {
        fields.ensureIndexes();
    }

    /**
     * Transactions their appenders have not released, older than {@code olderThan}: kept in the log rather than moved
     * to the archive (they are log entries either way; only where they are read from differs).
     */
    @Override
    public java.util.List<dev.consistencykit.core.KeptRecord> kept(Duration olderThan, int limit) {
        return dev.consistencykit.core.spi.RecordReleases.kept(fields.ledger, "ts", fields.clock,
                fields.clock.cutoff(olderThan), limit);
    }

    /** Releases the transactions this instance appended and still holds. */
    @Override
    public void close() {
        fields.releases.flush();
    }

    // ---------------------------------------------------------------- append and commit

    /** Validates and fingerprints {@code tx}: nothing is sent. */
    public Prepared prepare(LedgerTransaction tx) {
        return appends.prepare(tx);
    }

    /** Appends {@code p} (one write when the heads are known), idempotently for its id. */
    public Appended append(Prepared p) {
        return appends.append(p);
    }

    /** Appends and commits {@code p}, committing its predecessors first where needed. */
    public OperationResult apply(Prepared p) {
        return committer.apply(p);
    }

    /** Commits every transaction left uncommitted longer than {@code staleAfter}, in each account's order. */
    @Override
    public RecoveryReport recover(Duration staleAfter) {
        return committer.commitPending(staleAfter);
    }

    /** {@link #recover(Duration)} for the transaction {@code id} (and what must commit before it). */
    @Override
    public RecoveryReport recoverOne(Object id, Duration staleAfter) {
        return committer.commitPending(staleAfter, id);
    }

    /**
     * The transaction {@code id} (from the ledger, or the archive once archived) and each account it changes with
     * the balance a reader gets ({@link #balances}).
     */
    @Override
    public Optional<OperationView> describe(Object id) {
        Document tx = fields.byId(id);
        if (tx == null) {
            Document archived = fields.archive.find(eq("_id." + LedgerFields.ARCHIVED_ID, id))
                    .sort(Sorts.descending("ts")).first();
            if (archived == null) {
                return Optional.empty();
            }
            tx = LedgerFields.fromArchive(archived);
        }
        List<String> accounts = new ArrayList<>();
        for (Object c : tx.get(CHANGES) instanceof List<?> changes ? changes : List.of()) {
            if (c instanceof Document change && change.get(ACCOUNT) instanceof String account
                    && !accounts.contains(account) && accounts.size() < DESCRIBED_ACCOUNTS) {
                accounts.add(account);
            }
        }
        Map<String, Long> balances = accounts.isEmpty() ? Map.of() : reads.balances(accounts);
        List<OperationView.Touched> touched = new ArrayList<>();
        for (String account : accounts) {
            touched.add(new OperationView.Touched(fields.config.accountsCollection(), account, new Document("_id", account)
                    .append("balance", balances.get(account)), "the balance Ledger.balances reads"));
        }
        String state = tx.get("proc") + (tx.get("state") == null ? "" : ", " + tx.get("state"));
        return Optional.of(new OperationView(id, state, tx, touched));
    }

    /** The most accounts {@link #describe} reads. */
    private static final int DESCRIBED_ACCOUNTS = 50;

    /** Transactions committed within the window, by the {@code proc_ts} index. */
    @Override
    public java.util.OptionalLong finishedSince(Duration window, int cap) {
        return java.util.OptionalLong.of(fields.ledger.countDocuments(and(eq("proc", COMMITTED), gt("ts",
                fields.clock.cutoff(window))), new com.mongodb.client.model.CountOptions().limit(cap)));
    }

    // ---------------------------------------------------------------- cancel and reads

    /** Cancels {@code id} if the committer has not decided it yet. */
    public void cancel(Object id) {
        reads.cancel(id);
    }

    /** The compensating transaction of {@code id}, to append (idempotently) as {@code <id>:reversal}. */
    public Prepared reversalOf(Object id) {
        return reads.reversalOf(id);
    }

    /** The consistent read of several accounts' balances; {@code accounts} distinct and checked. */
    public Map<String, Long> balances(List<String> accounts) {
        return reads.balances(accounts);
    }

    /** The consistent read of one account's balance. */
    public long balance(String account) {
        return reads.balance(account);
    }

    /** The committed changes of {@code account} after {@code afterSeq}, in order, at most {@code limit}. */
    public List<LedgerEntry> entries(String account, long afterSeq, int limit) {
        return reads.entries(account, afterSeq, limit);
    }

    /** Accounts with a cache document, for a cursor over all accounts. */
    public List<String> accountIds() {
        return reads.accountIds();
    }

    /** Checks {@code account}'s caches against its changes; with {@code repair}, fills gaps and corrects them. */
    public ReconcileReport reconcile(String account, boolean repair) {
        return reconciler.reconcile(account, repair);
    }

    /** Accounts whose sequence has a gap. */
    public List<String> accountsWithGaps() {
        return reconciler.accountsWithGaps();
    }

    // ---------------------------------------------------------------- archive and status

    /**
     * Moves committed transactions appended longer than {@code olderThan} ago to the archive: copy, raise each
     * account's checkpoint, delete. Balances stay exact (they start from the cache, which is at or past every
     * checkpoint); reconcile folds from the checkpoint. Transactions their appender has not released yet
     * ({@link RecordReleases}) stay in the ledger.
     */
    public int archive(Duration olderThan) {
        fields.releases.flush();
        Date cutoff = fields.clock.cutoff(olderThan);
        int moved = 0;
        // a transaction its appender has not released may still be written again by that appender's retry: kept
        List<Document> old = fields.ledger.find(and(eq("proc", COMMITTED), lte("ts", cutoff), RecordReleases
                .released()))
                .sort(Sorts.ascending("ts")).into(new ArrayList<>());
        for (Document tx : old) {
            Object id = tx.get("_id");
            Document copy = new Document(tx);
            copy.put("_id", archiveKey(tx));
            fields.config.retryPolicy().run(fields.config.name(), id, "archive copy",
                    () -> fields.archive.replaceOne(eq("_id", copy.get("_id")), copy, new ReplaceOptions()
                            .upsert(true)));
            for (Document c : tx.getList(CHANGES, Document.class)) {
                String account = c.getString(ACCOUNT);
                long seq = c.getLong(SEQ);
                Document checkpoint = new Document(SEQ, seq).append(BALANCE, c.getLong(CACHE_BAL));
                fields.config.retryPolicy().run(fields.config.name(), account, "raise checkpoint", () -> fields
                        .accounts.updateOne(
                        and(eq("_id", account), or(exists(CHECKPOINT, false), lte(CHECKPOINT + "." + SEQ, seq - 1))),
                        Updates.set(CHECKPOINT, checkpoint)));
            }
            fields.config.retryPolicy().run(fields.config.name(), id, "archive delete", () -> fields.ledger.deleteOne(
                    and(eq("_id", id), eq("proc", COMMITTED))));
            moved++;
            fields.archived.increment();
        }
        return moved;
    }

    /** Transactions appended longer than {@code staleAfter} ago and not committed yet, oldest first. */
    @Override
    public List<InterruptedOperation> interrupted(Duration staleAfter, int limit) {
        List<InterruptedOperation> out = new ArrayList<>();
        for (Document tx : fields.ledger.find(and(eq("proc", UNCOMMITTED), lte("ts", fields.clock.cutoff(staleAfter))))
                .projection(Projections.include("ts", CHANGES + "." + ACCOUNT)).sort(Sorts.ascending("ts"))
                .limit(limit)) {
            List<Object> touched = new ArrayList<>();
            tx.getList(CHANGES, Document.class, List.of()).forEach(c -> touched.add(c.get(ACCOUNT)));
            out.add(new InterruptedOperation(tx.get("_id"), UNCOMMITTED, fields.clock.ageOf(tx.getDate("ts")
                    .toInstant()),
                    "accounts " + touched));
        }
        return out;
    }

    /** Transactions by {@code proc} from one snapshot ({@link StateSnapshot}); the oldest uncommitted one's age. */
    @Override
    public StrategyStatus status() {
        StateSnapshot snapshot = StateSnapshot.of(fields.ledger, "proc", "ts");
        Map<String, Long> counts = new HashMap<>(snapshot.counts());
        counts.putIfAbsent(UNCOMMITTED, 0L);
        counts.putIfAbsent(COMMITTED, 0L);
        Optional<Duration> age = snapshot.oldestOf(List.of(UNCOMMITTED)).map(fields.clock::ageOf);
        return new StrategyStatus(fields.config.name(), counts, counts.get(UNCOMMITTED), age);
    }

    /** The counters since this engine was built. */
    @Override
    public LedgerMetrics metrics() {
        return new LedgerMetrics(fields.appended.sum(), fields.collisions.sum(), fields.headQueries.sum(), fields
                .committed.sum(), fields.canceled.sum(),
                fields.gapsFilled.sum(), fields.archived.sum());
    }

    @Override
    public List<String> setupProblems() {
        return fields.requiredIndexes.problems();
    }
}
