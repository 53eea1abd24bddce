package dev.consistencykit.logreconciliation;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.Guarantees;
import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.MaintenanceStep;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyBuilder;
import dev.consistencykit.core.StrategyEntry;
import dev.consistencykit.core.spi.Calls;
import dev.consistencykit.core.spi.Checks;
import dev.consistencykit.core.spi.Names;
import dev.consistencykit.core.spi.PatternRegistry;
import dev.consistencykit.logreconciliation.internal.LedgerAppends;
import dev.consistencykit.logreconciliation.internal.LedgerArchiver;
import dev.consistencykit.logreconciliation.internal.LedgerCommitter;
import dev.consistencykit.logreconciliation.internal.LedgerParts;
import dev.consistencykit.logreconciliation.internal.LedgerReads;
import dev.consistencykit.logreconciliation.internal.LedgerReconciler;

/**
 * An append-only ledger: each transaction is one document holding all its account changes (atomic by construction),
 * each change numbered in its account's log by a sequence number a unique multikey index keeps unique; a committer
 * advances cached balances in log order; {@link #balance} is exact at any moment; {@link #reconcile} proves a cache
 * against its log.
 *
 * <p><b>What it guarantees.</b> A transaction is all its changes or none (one insert). Per account, changes are
 * numbered 1, 2, 3… without gaps ({@link SeqAllocation#COUNTER} fills a gap left by an append that never happened with
 * a void change) and committed strictly in that order, each exactly once: the decision (valid, or canceled by the
 * overdraft rule) is one compare-and-set taken while every account of the transaction stands just before it, so every
 * process computes the same one, and each cache moves by compare-and-set on its seqId. Committers may run in any
 * number of processes. Safety never depends on clocks.
 *
 * <p><b>What a reader may see.</b> {@link #balance} counts every valid change, committed or not: a transfer shows on
 * both accounts as soon as it is appended (never on one only). With the overdraft rule, an appended withdrawal may
 * still be canceled when the committer reaches it; the cache ({@code balance} field) lags the log until the committer
 * runs; a {@link LedgerCursor} sees committed changes only, in order.
 *
 * <p>Thread-safe; any number of instances in any number of processes may share the collections.
 *
 * <pre>{@code
 * Ledger ledger = Ledger.builder(db).overdraftFloor(0).build();
 * ledger.ensureIndexes();
 * ledger.append(LedgerTransaction.transfer("alice", "bob", 2_500));   // one insert
 * long alice = ledger.balance("alice");                              // cache + later valid changes
 * ledger.recover();                                                  // the committer, from any process
 * ReconcileReport report = ledger.reconcile("alice", false);
 * }</pre>
 */
public final class Ledger extends StrategyEntry<LedgerTransaction, LedgerConfig, LedgerMetrics> {

    /** The most accounts one {@link #balances} call reads. */
    public static final int MAX_BALANCES = 1_000;
    private final LedgerAppends appends;
    private final LedgerCommitter committer;
    private final LedgerReads reads;
    private final LedgerReconciler reconciler;
    private final LedgerArchiver archiver;

    private Ledger(LedgerConfig config, Calls calls, LedgerParts parts) {
        super(config, calls, parts.store(), parts.committer(), parts.audit());
        this.appends = parts.appends();
        this.committer = parts.committer();
        this.reads = parts.reads();
        this.reconciler = parts.reconciler();
        this.archiver = parts.archiver();
    }

    /** A builder for a ledger on {@code database}. */
    public static Builder builder(MongoDatabase database) {
        return new Builder(database);
    }

    /**
     * A builder per instance of this pattern that registered itself in {@code database} (from its
     * {@code ensureIndexes()}), with its name, collections and fields and every other setting at its default: how an
     * operator's tool rebuilds an instance without the application's code. A registration this pattern did not write
     * is skipped and logged, not obeyed.
     */
    public static List<Builder> registered(MongoDatabase database) {
        return PatternRegistry.builders(database, "log-reconciliation", Set.of("ledger", "accounts", "archive"), Set.of(),
                r -> builder(database).name(r.name())
                        .collections(r.collections().get("ledger"), r.collections().get("accounts"),
                                r.collections().get("archive")));
    }

    /** A ledger with the defaults. */
    public static Ledger on(MongoDatabase database) {
        return builder(database).build();
    }

    /** Same as {@link #append}. */
    @Override
    public OperationId submit(LedgerTransaction tx) {
        return append(tx);
    }

    /**
     * Appends {@code tx}, uncommitted: one insert when this process knows the accounts' sequence heads, plus a
     * collision retry when another writer took a number. The same id with the same changes returns the existing
     * transaction.
     *
     * @throws IdempotencyConflictException if the id exists with other changes (nothing is written)
     */
    public OperationId append(LedgerTransaction tx) {
        LedgerAppends.Prepared p = appends.prepare(tx);
        return calls.operation("append", tx.id().value(),
                () -> new OperationId(appends.append(p).doc().get("_id")));
    }

    /**
     * Appends {@code tx} and commits it in this thread (committing first any earlier transaction of its accounts that
     * is still uncommitted).
     *
     * @return committed; aborted when canceled (by the overdraft rule, or by {@link #cancel} before the commit); in
     *         flight only when an earlier sequence number of one of its accounts is missing from the log
     * @throws IdempotencyConflictException if the id exists with other changes (nothing is written)
     */
    @Override
    public OperationResult apply(LedgerTransaction tx) {
        LedgerAppends.Prepared p = appends.prepare(tx);
        return calls.operation("apply", tx.id().value(), () -> committer.apply(p));
    }

    /**
     * Cancels transaction {@code id} before the committer decides it: it stays in the log, its changes count for
     * nothing. Idempotent.
     *
     * @throws UnknownTransactionException    if there is no such transaction
     * @throws TransactionCommittedException  if the committer already decided it: {@link #reverse} it instead
     */
    public void cancel(OperationId id) {
        Objects.requireNonNull(id, "id");
        calls.operation("cancel", id.value(), () -> reads.cancel(id.value()));
    }

    /**
     * Reverses transaction {@code id} by appending its compensating transaction (every change's opposite), with id
     * {@code <id>:reversal}: idempotent. The default way to undo a committed transaction.
     *
     * @throws UnknownTransactionException if there is no such transaction
     */
    public OperationId reverse(OperationId id) {
        Objects.requireNonNull(id, "id");
        return calls.operation("reverse", id.value(), () -> {
            LedgerAppends.Prepared p = reads.reversalOf(id.value());
            return new OperationId(appends.append(p).doc().get("_id"));
        });
    }

    /**
     * The balance of {@code account}: its cache plus every later valid change, committed or not. Exact at any moment,
     * also while a committer and an archiver run: three round trips (the cache, the later changes, the cache again to
     * check that no entry it passed meanwhile left the log before it was read; the read starts again if one did). To
     * read several accounts together, use {@link #balances}.
     */
    public long balance(String account) {
        String a = checkedAccount(account);
        return calls.idempotent("balance", () -> reads.balance(a));
    }

    /**
     * The balances of several accounts read together: each is what {@link #balance} would say, and together they
     * count every transaction entirely or not at all, so a transfer between two of them never shows on one only and
     * their sum is conserved at every moment (the consistent read a report or an invariant check needs; calling
     * {@link #balance} once per account can straddle a transfer). Three round trips when no transaction left the log
     * while they were read, else the read starts again.
     *
     * @param accounts the accounts, at most {@value #MAX_BALANCES}; duplicates are read once
     * @return each account's balance, in the order given
     * @throws dev.consistencykit.core.InvalidInputException if an account is not a valid account name, or there are
     *         none or too many
     */
    public Map<String, Long> balances(Collection<String> accounts) {
        Objects.requireNonNull(accounts, "accounts");
        if (accounts.isEmpty() || accounts.size() > MAX_BALANCES) {
            throw new InvalidInputException(name(), "accounts", "balances reads 1 to " + MAX_BALANCES
                    + " accounts, was given " + accounts.size());
        }
        List<String> checked = new ArrayList<>(new LinkedHashSet<>(accounts.stream().map(this::checkedAccount)
                .toList()));
        return calls.idempotent("balances", () -> reads.balances(checked));
    }

    /**
     * A cursor over {@code account}'s committed changes after seqId {@code afterSeq} (0: from the start).
     *
     * @throws IllegalArgumentException if {@code afterSeq} is negative
     */
    public LedgerCursor cursor(String account, long afterSeq) {
        String a = checkedAccount(account);
        return new LedgerCursor(reads, calls, () -> List.of(a), LedgerCursor.checked(Map.of(a, afterSeq)));
    }

    /**
     * A cursor over every account's committed changes, resuming from {@code positions} (account → last seqId
     * consumed; an account not named starts from the beginning). Each poll reads every account's cache.
     */
    public LedgerCursor cursorOverAll(Map<String, Long> positions) {
        return new LedgerCursor(reads, calls, reads::accountIds, LedgerCursor.checked(positions));
    }

    /**
     * Rebuilds {@code account} from its log (from its checkpoint, or seqId 1) and compares it with the cache and every
     * recorded {@code cacheBal}. A mismatch is reported; with {@code repair}, wrong {@code cacheBal} values and a
     * wrong cache balance are rewritten from the log (a cache ahead of the log is reported, never rewritten).
     */
    public ReconcileReport reconcile(String account, boolean repair) {
        String a = checkedAccount(account);
        return calls.idempotent("reconcile", () -> reconciler.reconcile(a, repair));
    }

    /**
     * {@link #reconcile(String, boolean) reconcile} without repair, of each account with a log, at most {@code limit}
     * of them: what an operator's check runs (the dashboard's). Reads every change of each account it checks.
     *
     * @return one report per account checked, those with problems first
     * @throws IllegalArgumentException if {@code limit} is below 1
     */
    public List<ReconcileReport> reconcileAccounts(int limit) {
        Checks.atLeast("limit", limit, 1);
        List<String> accounts = calls.idempotent("list accounts", reads::accountIds);
        List<ReconcileReport> reports = new java.util.ArrayList<>();
        for (String account : accounts.subList(0, Math.min(limit, accounts.size()))) {
            reports.add(calls.idempotent("reconcile", () -> reconciler.reconcile(account, false)));
        }
        reports.sort(java.util.Comparator.comparing(r -> r.problems().isEmpty()));
        return reports;
    }

    /** Accounts whose log has a hole (a missing sequence number), by one pass over every change. */
    public List<String> accountsWithGaps() {
        return calls.idempotent("accounts with gaps", reconciler::accountsWithGaps);
    }

    /**
     * Moves committed transactions appended longer than {@code olderThan} ago to the archive collection; raises each
     * account's checkpoint; balances stay exact, reconcile starts from the checkpoint, cursors read the archive.
     *
     * @return how many transactions were moved
     */
    public int archive(Duration olderThan) {
        Checks.notNegative("olderThan", olderThan);
        return calls.idempotent("archive", () -> archiver.archive(olderThan));
    }

    /**
     * The background committer every 5 s (transactions uncommitted for {@code staleAfter}). Archiving changes the
     * data kept, so it is not scheduled by default: add {@code archive(olderThan)} as a step of your own.
     */
    @Override
    public List<MaintenanceStep> maintenance() {
        return List.of(MaintenanceStep.of(name() + " recover", Duration.ofSeconds(5), this::recover));
    }

    @Override
    public Guarantees guarantees() {
        return new Guarantees(
                "a transaction is one document: all its changes or none, at once",
                "balance() counts every valid change as soon as it is appended; caches lag until committed",
                "per account, a gap-free sequence; committed strictly in that order",
                "the committer decides and commits uncommitted transactions in order, from any process");
    }

    private String checkedAccount(String account) {
        return Change.checkAccount(config.name(), account);
    }

    /** Builds a {@link Ledger}. Setters check their argument. */
    public static final class Builder extends LedgerConfig.Settings<Builder> {

        private LedgerListener listener = new LedgerListener() { };

        private Builder(MongoDatabase database) {
            super(database);
        }

        /** Hooks called as transactions are appended and committed. */
        public Builder listener(LedgerListener value) {
            this.listener = Objects.requireNonNull(value, "listener");
            return this;
        }

        /**
         * Builds the instance. Sends nothing to the server.
         *
         * @throws dev.consistencykit.core.UnsafeConfigurationException if the write concern is {@code w:0}
         */
        public Ledger build() {
            MongoDatabase db = acknowledgedDatabase();
            LedgerConfig built = builtConfig();
            ServerClock time = serverClockFor(db, built);
            return new Ledger(built, calls(built), LedgerParts.of(built, db, time, listener));
        }
    }
}
