package dev.consistencykit.logreconciliation.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.Listeners;
import dev.consistencykit.core.spi.PatternRecovery;
import dev.consistencykit.logreconciliation.LedgerListener;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Filters.or;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.ACCOUNT;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.BALANCE;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.CACHE_BAL;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.CANCELED;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.CHANGES;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.COMMITTED;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.MAX_CHAIN;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.SEQ;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.UNCOMMITTED;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.VALID;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.VALUE;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.longOf;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Date;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.MongoException;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationInterruptedException;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.spi.Deadline;
import dev.consistencykit.core.spi.MongoErrors;
import dev.consistencykit.core.spi.Passes;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.logreconciliation.Change;
import dev.consistencykit.logreconciliation.LedgerConfig;
import dev.consistencykit.logreconciliation.internal.LedgerAppends.Appended;
import dev.consistencykit.logreconciliation.internal.LedgerAppends.Prepared;

/**
 * The committer: deciding transactions in log order, moving each account's cache, re-sequencing what cannot commit
 * in place.
 */
public final class LedgerCommitter implements PatternRecovery {

    private static final Logger LOG = LoggerFactory.getLogger(LedgerCommitter.class);

    /** The longest single wait of {@code apply} for a number missing from the log. */
    static final Duration MAX_HOLE_WAIT = Duration.ofMillis(50);

    private final LedgerConfig config;
    private final LedgerStore store;
    private final LedgerAppends appends;
    private final LedgerHeads heads;
    private final LedgerCounters counters;
    private final ServerClock clock;
    private final LedgerListener listener;

    /** The committer, through the store, with the appends (a transaction re-sequenced is appended again). */
    LedgerCommitter(LedgerConfig config, LedgerStore store, LedgerAppends appends, LedgerHeads heads,
                    LedgerCounters counters, ServerClock clock, LedgerListener listener) {
        this.config = config;
        this.store = store;
        this.appends = appends;
        this.heads = heads;
        this.counters = counters;
        this.clock = clock;
        this.listener = listener;
    }

    /** Commits every transaction left uncommitted longer than {@code staleAfter}, in each account's order. */
    @Override
    public RecoveryReport recover(Duration staleAfter) {
        return commitPending(staleAfter);
    }

    /** {@link #recover(Duration)} for the transaction {@code id} (and what must commit before it). */
    @Override
    public RecoveryReport recoverOne(Object id, Duration staleAfter) {
        return commitPending(staleAfter, id);
    }

    // ---------------------------------------------------------------- commit

    /** How a commit attempt ended. */
    enum Step { DONE, BLOCKED, RETRY, FOREIGN }

    /** The outcome of driving one transaction: committed (valid or not), or blocked on a missing predecessor. */
    record Committed(Document doc, boolean byThisCall, boolean blocked) {
    }

    /** Appends and commits {@code p}, committing its predecessors first where needed. */
    public OperationResult apply(Prepared p) {
        Appended a = appends.append(p);
        Committed c = commitChain(a.doc(), config.staleAfter(), true);
        return result(c.doc());
    }

    /** The result of a committed (or not yet committable) transaction. */
    public OperationResult result(Document doc) {
        OperationId id = new OperationId(doc.get("_id"));
        if (!COMMITTED.equals(doc.getString("proc"))) {
            return OperationResult.inFlight(id, UNCOMMITTED);
        }
        if (CANCELED.equals(doc.getString("state"))) {
            return OperationResult.aborted(id, CANCELED, Optional.ofNullable(doc.getString("reason"))
                    .orElse("canceled"));
        }
        return OperationResult.committed(id, COMMITTED);
    }

    /**
     * Commits {@code target} and, first, every uncommitted predecessor it waits on (the transaction holding each of its
     * accounts' next seqId), with an explicit stack. A number missing from the log is filled once the transaction
     * waiting on it is older than {@code gapAfter}; before that, with {@code waitForHoles} the walk waits for it
     * (within the call's deadline) rather than returning blocked, as {@code apply} does: its caller asked for the
     * transaction committed, and the missing number is most likely an append in flight.
     */
    Committed commitChain(Document target, Duration gapAfter, boolean waitForHoles) {
        HoleWait holeWait = new HoleWait();
        Deque<Document> stack = new ArrayDeque<>();
        stack.push(target);
        boolean mine = false;
        int steps = 0;
        while (!stack.isEmpty()) {
            if (++steps > MAX_CHAIN) {
                throw new ConsistencyException(config.name(), target.get("_id"), "more than " + MAX_CHAIN
                        + " predecessors to commit first");
            }
            if (Deadline.remainingNanos() <= 0) {
                // the call's time is up: each step is a round trip or more, and a chain may be long (or never end,
                // on a cache whose seqId something else moved past the log): what is committed stays so, the rest is
                // in flight for recovery or the next call
                return new Committed(store.rereadAnywhere(target), mine, true);
            }
            Document tx = store.reread(stack.peek());
            if (tx == null || COMMITTED.equals(tx.getString("proc"))) {
                stack.pop();
                continue;
            }
            Blocked blocked = new Blocked();
            Step step = commitOne(tx, blocked);
            if (step == Step.FOREIGN) {
                // not an entry this ledger wrote (the collection is writable by others): never applied, left alone
                return new Committed(store.rereadAnywhere(target), false, true);
            }
            if (step == Step.DONE) {
                stack.pop();
                mine |= stack.isEmpty();
            } else if (step == Step.BLOCKED) {
                Document predecessor = holder(blocked.account, blocked.seq);
                if (predecessor != null && COMMITTED.equals(predecessor.getString("proc"))) {
                    // committed after the caches were read (the next step reads them again), or committed without
                    // moving this cache, which no committer does: the second is named, never walked forever
                    checkCommittedPassed(predecessor, blocked);
                } else if (predecessor != null && onStack(stack, predecessor.get("_id"))) {
                    // a cycle: transactions that reserved their numbers in opposite orders wait for each other
                    // (SeqAllocation.COUNTER). Move this one behind the others, then walk the chain again from the
                    // target: what the transactions below it on the stack wait for has changed
                    resequence(tx, Map.of());
                    stack.clear();
                    stack.push(target);
                } else if (predecessor != null) {
                    stack.push(predecessor);
                } else if (olderThan(tx, gapAfter)) {
                    // a number missing from the log before one a transaction holds: reserved by an append from its
                    // account's counter (SeqAllocation.COUNTER), or left by a transaction moved to fresh numbers by a
                    // committer that died before filling it. Once the waiting transaction is this old, whatever held
                    // the number is presumed dead; a late append collides with the filler and takes new numbers
                    fillGap(blocked.account, blocked.seq);
                } else if (!waitForHoles || !holeWait.pause(tx, gapAfter)) {
                    LOG.debug("[{}] {} waits for seqId {} of {}, which is not in the log", config.name(),
                            tx.get("_id"), blocked.seq, blocked.account);
                    return new Committed(store.rereadAnywhere(target), false, true);
                }
                // else apply() waited a moment for the missing number, most likely an append in flight: walk again
            }
        }
        return new Committed(store.rereadAnywhere(target), mine, false);
    }

    /**
     * The waits of one walk for numbers missing from the log: a few milliseconds first, doubling to
     * {@link #MAX_HOLE_WAIT}, never past the moment the waiting transaction turns {@code gapAfter} old (it is filled
     * then) nor past the call's deadline.
     */
    private final class HoleWait {
        private long nanos = TimeUnit.MILLISECONDS.toNanos(1);

        /** Waits once; false when the call's deadline leaves no time to, and the walk returns blocked. */
        boolean pause(Document waiting, Duration gapAfter) {
            Date ts = waiting.getDate("ts");
            long untilStale = ts == null ? nanos
                    : Math.max(0, Duration.between(clock.now(), ts.toInstant().plus(gapAfter)).toNanos()) + 1;
            long wait = Math.min(nanos, untilStale);
            if (wait >= Deadline.remainingNanos()) {
                return false;
            }
            nanos = Math.min(nanos * 2, MAX_HOLE_WAIT.toNanos());
            try {
                TimeUnit.NANOSECONDS.sleep(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new OperationInterruptedException(config.name(), waiting.get("_id"), "interrupted while "
                        + "waiting for an earlier number of one of its accounts to be appended", e);
            }
            return true;
        }
    }

    static boolean onStack(Deque<Document> stack, Object id) {
        for (Document d : stack) {
            if (Objects.equals(d.get("_id"), id)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Gives {@code tx}, still undecided, new sequence numbers after everything reserved so far (taken in one canonical
     * order, by account name), in one compare-and-set on its exact changes, then fills the numbers it held (those the
     * account caches have not passed) with canceled gap entries. Its changes, values and id stay as they were, so a
     * reader counts it exactly as before; it only moves behind the transactions it conflicted with. Used to break a
     * wait cycle (numbers reserved from counters in opposite orders) and to repair an append made with a stale
     * process-local head. If another committer decided or moved it first, nothing happens here.
     *
     * @param cacheSeqs the accounts' cache seqIds where known: a held number at or below its account's is not filled
     */
    void resequence(Document tx, Map<String, Long> cacheSeqs) {
        Object id = tx.get("_id");
        if (tx.getBoolean("decided", false)) {
            return;
        }
        List<Document> old = tx.getList(CHANGES, Document.class);
        Map<String, Long> fresh = new java.util.TreeMap<>();
        old.forEach(c -> fresh.put(c.getString(ACCOUNT), 0L));
        for (String account : List.copyOf(fresh.keySet())) {
            heads.forget(account);
            fresh.put(account, appends.nextSeq(account));
        }
        List<Document> moved = new ArrayList<>();
        for (Document c : old) {
            long seq = fresh.get(c.getString(ACCOUNT));
            moved.add(new Document(c).append(SEQ, seq).append(LedgerSchema.SEQ_KEY,
                    LedgerSchema.seqKey(c.getString(ACCOUNT), seq)));
        }
        long changed;
        try {
            changed = store.resequence(id, old, moved);
        } catch (MongoException e) {
            if (!MongoErrors.isDuplicateKey(e)) {
                throw e;
            }
            fresh.keySet().forEach(heads::forget);   // another append took a fresh number first: next pass
            appends.abandon(fresh);
            return;
        }
        if (changed == 0) {
            appends.abandon(fresh);   // another committer moved or decided it first: these numbers stay unused
            return;
        }
        fresh.forEach(appends::learn);
        counters.moved.increment();
        LOG.info("[{}] transaction {} moved from {} to {}", config.name(), id,
                old.stream().map(c -> c.getString(ACCOUNT) + ":" + c.getLong(SEQ)).toList(), fresh);
        for (Document c : old) {
            if (c.getLong(SEQ) > cacheSeqs.getOrDefault(c.getString(ACCOUNT), 0L)) {
                fillGap(c.getString(ACCOUNT), c.getLong(SEQ));
            }
        }
    }

    static final class Blocked {
        private String account;
        private long seq;
    }

    /**
     * Throws unless the cache of {@code blocked}'s account now stands at or past {@code committed}'s change there: a
     * committed transaction has moved every one of its accounts' caches past it.
     */
    private void checkCommittedPassed(Document committed, Blocked blocked) {
        long cacheSeq = longOf(store.account(blocked.account, "read account"), SEQ);
        if (cacheSeq < blocked.seq) {
            throw new ConsistencyException(config.name(), committed.get("_id"), "transaction "
                    + Values.show(committed.get("_id")) + " is committed and holds seqId " + blocked.seq
                    + " of account " + blocked.account + ", whose cache stands at seqId " + cacheSeq
                    + ": a committed transaction has moved its accounts' caches past it, and no committer of this"
                    + " ledger commits one that has not; left as found");
        }
    }

    Document holder(String account, long seq) {
        return store.holder(account, seq);
    }

    boolean olderThan(Document tx, Duration age) {
        Date ts = tx.getDate("ts");
        return ts != null && (age.isZero() || !ts.after(clock.cutoff(age)));
    }

    /**
     * Why {@code tx}, read back from the log, is not an entry this ledger wrote, or null: anything read back from a
     * collection others can write is input again before it drives a write.
     */
    String malformed(Document tx) {
        if (!(tx.get(CHANGES) instanceof List<?> changes) || changes.isEmpty()) {
            return "it has no changes array";
        }
        for (Object e : changes) {
            if (!(e instanceof Document c)) {
                return "a change is not a document";
            }
            try {
                Change.checkAccount(config.name(), c.get(ACCOUNT) instanceof String a ? a : null);
            } catch (InvalidInputException invalid) {
                return "a change names no valid account (" + invalid.getMessage() + ")";
            }
            if (c.get(SEQ) != null && !(c.get(SEQ) instanceof Long)) {
                return "a change's " + SEQ + " is not a long";
            }
            if (c.get(CACHE_BAL) != null && !(c.get(CACHE_BAL) instanceof Long)) {
                return "a change's " + CACHE_BAL + " is not a long";
            }
        }
        return null;
    }

    Step commitOne(Document tx, Blocked blocked) {
        Object id = tx.get("_id");
        String foreign = malformed(tx);
        if (foreign != null) {
            LOG.warn("[{}] log entry {} is left alone: {}", config.name(), Values.show(id), foreign);
            return Step.FOREIGN;
        }
        List<Document> changes = tx.getList(CHANGES, Document.class);
        if (!tx.getBoolean("decided", false)) {
            Step decided = decide(tx, changes, blocked);
            if (decided != Step.DONE) {
                return decided;
            }
            tx = store.reread(tx);
            if (tx == null) {
                // gone from the log meanwhile: another process committed it and an archiver moved it (only
                // committed transactions leave the log); the caller reads the outcome where it is now
                return Step.DONE;
            }
            if (!tx.getBoolean("decided", false)) {
                return Step.RETRY;      // canceled between our read and our decision: decide again
            }
            changes = tx.getList(CHANGES, Document.class);
        }
        // advance each account's cache by compare-and-set on its seqId: idempotent, in log order by construction
        for (Document c : changes) {
            String account = c.getString(ACCOUNT);
            long seq = c.getLong(SEQ);
            if (!store.advanceAccount(account, seq, c.getLong(CACHE_BAL))) {
                // decided while every cache stood just before it, and a cache moves only forward: never here
                throw new ConsistencyException(config.name(), id, "transaction " + Values.show(id)
                        + " is decided at seqId " + seq + " of account " + account + ", whose cache stands below seqId "
                        + (seq - 1) + ": it was decided while the cache did not stand just before it; not committed");
            }
        }
        long marked = store.markCommitted(id);
        if (marked > 0) {
            boolean valid = VALID.equals(tx.getString("state"));
            counters.committed.increment();
            if (!valid) {
                counters.canceled.increment();
            }
            String reason = tx.getString("reason");
            LOG.debug("[{}] committed {} ({})", config.name(), id, valid ? "valid" : "canceled: " + reason);
            Listeners.call(config.name(), () -> listener.onCommitted(new OperationId(id), valid, reason));
        }
        return Step.DONE;
    }

    /**
     * Decides {@code tx} once every one of its accounts' caches stands just before its change: keeps it valid or
     * cancels it by the overdraft rule, and records every change's {@code cacheBal}, in one compare-and-set. The caches
     * cannot move until this transaction advances them, so every process computes the same decision.
     */
    Step decide(Document tx, List<Document> changes, Blocked blocked) {
        Object id = tx.get("_id");
        Set<String> names = new HashSet<>();
        changes.forEach(c -> names.add(c.getString(ACCOUNT)));
        Map<String, Document> caches = store.accounts(id, "read accounts", names);
        for (Document c : changes) {
            long cacheSeq = longOf(caches.get(c.getString(ACCOUNT)), SEQ);
            long seq = c.getLong(SEQ);
            if (cacheSeq >= seq) {
                // some process decided and began advancing, or moved the transaction to fresh numbers (and a
                // filler took the one read here): read it again. Still undecided at the same numbers means the
                // transaction holds a number the account's cache has passed: it was appended from a process-local
                // head learned before an archive removed the entries whose unique keys would have refused it.
                // Its numbers are moved to fresh ones; until then balance() counts it like any undecided change
                Document now = store.reread(tx);
                if (now != null && !now.getBoolean("decided", false)
                        && changes.equals(now.getList(CHANGES, Document.class))) {
                    checkSoleHolder(id, c.getString(ACCOUNT), seq, cacheSeq);
                    Map<String, Long> cacheSeqs = new HashMap<>();
                    caches.forEach((account, cache) -> cacheSeqs.put(account, longOf(cache, SEQ)));
                    resequence(now, cacheSeqs);
                }
                return Step.RETRY;
            }
            if (cacheSeq < seq - 1) {
                blocked.account = c.getString(ACCOUNT);
                blocked.seq = cacheSeq + 1;
                return Step.BLOCKED;
            }
        }
        String state = tx.getString("state");
        String reason = tx.getString("reason");
        List<Bson> sets = new ArrayList<>();
        long[] after = new long[changes.size()];
        boolean valid = VALID.equals(state);
        for (int i = 0; i < changes.size() && valid; i++) {
            Document c = changes.get(i);
            long before = longOf(caches.get(c.getString(ACCOUNT)), BALANCE);
            long value = c.getLong(VALUE);
            try {
                after[i] = Math.addExact(before, value);
            } catch (ArithmeticException e) {
                valid = false;
                reason = "overflow: account " + c.getString(ACCOUNT) + " would overflow";
                break;
            }
            if (value < 0 && config.overdraftFloor().isPresent() && after[i] < config.overdraftFloor().getAsLong()) {
                valid = false;
                reason = "overdraft: account " + c.getString(ACCOUNT) + " would go from " + before + " to "
                        + after[i] + ", below the floor " + config.overdraftFloor().getAsLong();
            }
        }
        for (int i = 0; i < changes.size(); i++) {
            Document c = changes.get(i);
            long before = longOf(caches.get(c.getString(ACCOUNT)), BALANCE);
            sets.add(Updates.set(CHANGES + "." + i + "." + CACHE_BAL, valid ? after[i] : before));
        }
        sets.add(Updates.set("decided", true));
        sets.add(Updates.set("state", valid ? VALID : CANCELED));
        if (reason != null) {
            sets.add(Updates.set("reason", reason));
        }
        store.decide(id, state, changes, sets);
        // whether this call or another decided, the transaction is decided now (or was canceled meanwhile: retry)
        return Step.DONE;
    }

    /**
     * Throws unless {@code id} alone holds {@code account}'s seqId {@code seq}, which its account's cache passed (at
     * {@code cacheSeq}) while {@code id} stayed undecided there: the unique key of every change makes that number one
     * transaction's, so a second holder means the server let both in. The message names what was found.
     */
    private void checkSoleHolder(Object id, String account, long seq, long cacheSeq) {
        List<Object> holders = store.holderIds(account, seq);
        if (holders.size() < 2) {
            return;
        }
        List<String> setup = store.setupProblems();
        throw new ConsistencyException(config.name(), id, "seqId " + seq + " of account " + account + " is held by "
                + "transactions " + holders.stream().map(Values::show).toList() + ", and the account's cache stands at"
                + " seqId " + cacheSeq + " while " + Values.show(id) + " is undecided: "
                + (setup.isEmpty() ? "the server let two transactions hold one number although the unique index on"
                        + " {changes." + LedgerSchema.SEQ_KEY + "} exists" : String.join("; ", setup))
                + "; left as found");
    }

    void fillGap(String account, long seq) {
        if (store.fillGap(account, seq)) {
            counters.gapsFilled.increment();
            LOG.info("[{}] filled the gap at seqId {} of {} left by an append that never happened", config.name(),
                    seq, account);
        }
        // else filled already, or the late append arrived
    }

    /** Commits every transaction uncommitted for longer than {@code staleAfter}, in log order per account. */
    public RecoveryReport commitPending(Duration staleAfter) {
        return commitPending(staleAfter, null);
    }

    /**
     * {@link #commitPending(Duration)} of the transaction {@code only} alone when it is not {@code null} (checked);
     * committing it commits the transactions before it in its accounts' logs first, as every commit does.
     */
    public RecoveryReport commitPending(Duration staleAfter, Object only) {
        store.close();
        long start = System.nanoTime();
        Bson pendingFilter = staleAfter.isZero() ? eq("proc", UNCOMMITTED)
                : and(eq("proc", UNCOMMITTED), lte("ts", clock.cutoff(staleAfter)));
        Bson filter = only == null ? pendingFilter : and(eq("_id", only), pendingFilter);
        int examined = 0;
        int forward = 0;
        int back = 0;
        int skipped = 0;
        List<Document> pending = store.idsOf(filter);
        for (Document found : pending) {
            examined++;
            Committed c = Passes.orLeftToNextPass(config.name(), "committer: transaction "
                    + Values.show(found.get("_id")), null, () -> commitChain(found, staleAfter, false));
            if (c == null) {
                skipped++;
                continue;
            }
            if (c.blocked() || c.doc() == null) {
                skipped++;
            } else if (!c.byThisCall()) {
                skipped++;
            } else if (VALID.equals(c.doc().getString("state"))) {
                forward++;
            } else {
                back++;
            }
        }
        if (forward + back > 0) {
            LOG.info("[{}] committer committed {} transactions ({} canceled), {} already done or blocked",
                    config.name(), forward + back, back, skipped);
        }
        return new RecoveryReport(config.name(), examined, forward, back, skipped,
                Duration.ofNanos(System.nanoTime() - start));
    }
}
