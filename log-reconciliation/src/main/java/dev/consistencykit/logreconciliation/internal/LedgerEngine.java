package dev.consistencykit.logreconciliation.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.elemMatch;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Filters.or;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Date;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import org.bson.Document;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.google.common.hash.Hashing;
import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.Inputs;
import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.Listeners;
import dev.consistencykit.core.MongoErrors;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.PatternRegistry;
import dev.consistencykit.core.ReadSettings;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.core.WriteConcerns;
import dev.consistencykit.logreconciliation.Change;
import dev.consistencykit.logreconciliation.ChangeType;
import dev.consistencykit.logreconciliation.LedgerConfig;
import dev.consistencykit.logreconciliation.LedgerEntry;
import dev.consistencykit.logreconciliation.LedgerListener;
import dev.consistencykit.logreconciliation.LedgerMetrics;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.logreconciliation.ReconcileReport;
import dev.consistencykit.logreconciliation.SeqAllocation;
import dev.consistencykit.logreconciliation.TransactionCommittedException;
import dev.consistencykit.logreconciliation.UnknownTransactionException;

/**
 * The ledger protocol: append as one document with per-account sequence numbers; commit by deciding the transaction
 * once (cancel by the overdraft rule or keep, recording every change's {@code cacheBal}), then advancing each account's
 * cache by compare-and-set on its seqId, then marking the transaction committed. Every step is idempotent and safe
 * from many processes.
 */
public final class LedgerEngine {

    /** Stored {@code proc} of a transaction not yet committed. */
    public static final String UNCOMMITTED = "UNCOMMITTED";
    /** Stored {@code proc} of a committed transaction. */
    public static final String COMMITTED = "COMMITTED";
    /** Stored {@code state} of a transaction whose changes count. */
    public static final String VALID = "VALID";
    /** Stored {@code state} of a transaction whose changes do not count. */
    public static final String CANCELLED = "CANCELLED";

    private static final Logger LOG = LoggerFactory.getLogger(LedgerEngine.class);
    static final String CHANGES = "changes";
    static final String ACCOUNT = "account";
    static final String SEQ = "seqId";
    static final String VALUE = "value";
    private static final String TYPE = "type";
    private static final String CACHE_BAL = "cacheBal";
    static final String BALANCE = "balance";
    private static final String HEAD = "head";
    private static final String CHECKPOINT = "checkpoint";
    private static final int MAX_APPEND_ATTEMPTS = 50;
    private static final int MAX_CHAIN = 10_000;

    private final LedgerConfig config;
    private final MongoCollection<Document> ledger;
    private final MongoCollection<Document> accounts;
    private final MongoCollection<Document> archive;
    private final MongoDatabase database;
    private final ConsistentBalances consistentBalances;
    private final ServerClock clock;
    private final LedgerListener listener;
    private final Map<String, Long> heads = new ConcurrentHashMap<>();

    private final LongAdder appended = new LongAdder();
    private final LongAdder collisions = new LongAdder();
    private final LongAdder headQueries = new LongAdder();
    private final LongAdder committed = new LongAdder();
    private final LongAdder cancelled = new LongAdder();
    private final LongAdder gapsFilled = new LongAdder();
    private final LongAdder archived = new LongAdder();

    /** The engine over {@code database} (already checked for an acknowledged write concern). */
    public LedgerEngine(LedgerConfig config, MongoDatabase database, ServerClock clock, LedgerListener listener) {
        database = ReadSettings.ownReads(database);
        this.config = Objects.requireNonNull(config, "config");
        this.ledger = database.getCollection(config.ledgerCollection());
        this.accounts = database.getCollection(config.accountsCollection());
        this.archive = database.getCollection(config.archiveCollection());
        this.database = database;
        this.consistentBalances = new ConsistentBalances(config.name(), ledger, accounts, config.retryPolicy());
        this.clock = Objects.requireNonNull(clock, "clock");
        this.listener = Objects.requireNonNull(listener, "listener");
    }

    /** The unique sequence index, the committer's and archiver's index, and the archive's. */
    public void ensureIndexes() {
        ledger.createIndex(Indexes.ascending(CHANGES + "." + ACCOUNT, CHANGES + "." + SEQ),
                new IndexOptions().unique(true).name("account_seq"));
        ledger.createIndex(Indexes.ascending("proc", "ts"), new IndexOptions().name("proc_ts"));
        archive.createIndex(Indexes.ascending(CHANGES + "." + ACCOUNT, CHANGES + "." + SEQ),
                new IndexOptions().name("account_seq"));
        PatternRegistry.register(database, new PatternRegistry.Registration("log-reconciliation", config.name(),
                Map.of("ledger", config.ledgerCollection(), "accounts", config.accountsCollection(), "archive",
                        config.archiveCollection()), Map.of()));
    }

    // ---------------------------------------------------------------- append

    /** A transaction checked and fingerprinted. */
    public record Prepared(LedgerTransaction tx, String fingerprint, Object reverses) {
    }

    /** Validates and fingerprints {@code tx}: nothing is sent. */
    public Prepared prepare(LedgerTransaction tx) {
        Objects.requireNonNull(tx, "transaction");
        Inputs.operationId(config.name(), "id", tx.id().value());
        StringBuilder canonical = new StringBuilder(tx.transfer() ? "T" : "E");
        for (Change c : tx.changes()) {
            canonical.append('|').append(c.account().length()).append(':').append(c.account()).append(':')
                    .append(c.type()).append(':').append(c.value());
        }
        return new Prepared(tx, Hashing.sha256().hashString(canonical, StandardCharsets.UTF_8).toString()
                .substring(0, 32), null);
    }

    /** The stored transaction once appended. */
    public record Appended(Document doc, boolean fresh) {
    }

    /** Appends {@code p} (one write when the heads are known), idempotently for its id. */
    public Appended append(Prepared p) {
        Object id = p.tx().id().value();
        Map<String, Long> seqs = new LinkedHashMap<>();
        int collided = 0;
        for (int attempt = 1; attempt <= MAX_APPEND_ATTEMPTS; attempt++) {
            for (Change c : p.tx().changes()) {
                seqs.put(c.account(), nextSeq(c.account()));
            }
            Document doc = stored(p, seqs);
            try {
                config.retryPolicy().run(config.name(), id, "append", () -> ledger.updateOne(
                        and(eq("_id", id), exists("proc", false)),
                        Updates.combine(Updates.setOnInsert(doc), Updates.currentDate("ts")),
                        new UpdateOptions().upsert(true)));
                seqs.forEach(this::learn);
                appended.increment();
                int n = collided;
                LOG.debug("[{}] appended {} at {} after {} collisions", config.name(), id, seqs, n);
                notify(() -> listener.onAppended(p.tx().id(), n));
                doc.put("_id", id);
                return new Appended(doc, true);
            } catch (MongoException e) {
                if (!MongoErrors.isDuplicateKey(e)) {
                    throw e;
                }
            }
            Document existing = byId(id);
            if (existing != null) {
                if (!p.fingerprint().equals(existing.getString("h"))) {
                    throw new IdempotencyConflictException(config.name(), id, "transaction " + id
                            + " is already in the ledger with other changes; nothing was written");
                }
                for (Document c : existing.getList(CHANGES, Document.class)) {
                    learn(c.getString(ACCOUNT), c.getLong(SEQ));
                }
                // found rather than written (perhaps by this call's attempt whose acknowledgement failed): confirm
                // the write concern before reporting it appended
                config.retryPolicy().run(config.name(), id, "confirm append",
                        () -> WriteConcerns.confirm(ledger, id, config.name(), "append"));
                return new Appended(existing, false);
            }
            // another writer took one of our sequence numbers: learn the heads again and retry
            collided++;
            collisions.increment();
            for (String account : seqs.keySet()) {
                heads.remove(account);
            }
        }
        throw new ConsistencyException(config.name(), id, "could not append after " + MAX_APPEND_ATTEMPTS
                + " sequence-number collisions; the accounts " + seqs.keySet() + " are too contended");
    }

    private Document stored(Prepared p, Map<String, Long> seqs) {
        List<Document> changes = new ArrayList<>();
        for (Change c : p.tx().changes()) {
            changes.add(new Document(ACCOUNT, c.account()).append(TYPE, c.type().name())
                    .append(VALUE, c.signedValue()).append(SEQ, seqs.get(c.account())));
        }
        Document doc = new Document("proc", UNCOMMITTED).append("state", VALID).append("h", p.fingerprint())
                .append("transfer", p.tx().transfer()).append(CHANGES, changes);
        if (p.reverses() != null) {
            doc.append("reverses", p.reverses());
        }
        return doc;
    }

    private void learn(String account, long seq) {
        heads.merge(account, seq, Math::max);
    }

    private long nextSeq(String account) {
        if (config.seqAllocation() == SeqAllocation.COUNTER) {
            Document after = config.retryPolicy().execute(config.name(), account, "reserve seqId",
                    () -> accounts.findOneAndUpdate(eq("_id", account),
                            Updates.combine(Updates.inc(HEAD, 1L), Updates.currentDate("headAt")),
                            new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.AFTER)
                                    .projection(Projections.include(HEAD))));
            return after.getLong(HEAD);
        }
        Long cached = heads.get(account);
        if (cached != null) {
            return cached + 1;
        }
        return queryHead(account) + 1;
    }

    /** The highest seqId of {@code account}: the cache's (or checkpoint's), or a later one in the log. */
    private long queryHead(String account) {
        headQueries.increment();
        Document cache = config.retryPolicy().execute(config.name(), account, "read account",
                () -> accounts.find(eq("_id", account)).first());
        long floor = Math.max(longOf(cache, SEQ), checkpointSeq(cache));
        // the tail after the cache: transactions holding a later change of this account, each projected to that
        // change alone ($elemMatch projection; the positional one is wrong on the embedded server)
        List<Document> tail = config.retryPolicy().execute(config.name(), account, "read head", () -> ledger.find(
                elemMatch(CHANGES, and(eq(ACCOUNT, account), gt(SEQ, floor))))
                .projection(Projections.elemMatch(CHANGES, and(eq(ACCOUNT, account), gt(SEQ, floor))))
                .into(new ArrayList<>()));
        long head = floor;
        for (Document d : tail) {
            for (Document c : d.getList(CHANGES, Document.class, List.of())) {
                head = Math.max(head, c.getLong(SEQ));
            }
        }
        heads.merge(account, head, Math::max);
        return head;
    }

    // ---------------------------------------------------------------- commit

    /** How a commit attempt ended. */
    private enum Step { DONE, BLOCKED, RETRY, FOREIGN }

    /** The outcome of driving one transaction: committed (valid or not), or blocked on a missing predecessor. */
    public record Committed(Document doc, boolean byThisCall, boolean blocked) {
    }

    /** Appends and commits {@code p}, committing its predecessors first where needed. */
    public OperationResult apply(Prepared p) {
        Appended a = append(p);
        Committed c = commitChain(a.doc(), config.staleAfter());
        return result(c.doc());
    }

    /** The result of a committed (or not yet committable) transaction. */
    public OperationResult result(Document doc) {
        OperationId id = new OperationId(doc.get("_id"));
        if (!COMMITTED.equals(doc.getString("proc"))) {
            return OperationResult.inFlight(id, UNCOMMITTED);
        }
        if (CANCELLED.equals(doc.getString("state"))) {
            return OperationResult.aborted(id, CANCELLED, Optional.ofNullable(doc.getString("reason"))
                    .orElse("cancelled"));
        }
        return OperationResult.committed(id, COMMITTED);
    }

    /**
     * Commits {@code target} and, first, every uncommitted predecessor it waits on (the transaction holding each of its
     * accounts' next seqId), with an explicit stack.
     */
    private Committed commitChain(Document target, Duration gapAfter) {
        Deque<Document> stack = new ArrayDeque<>();
        stack.push(target);
        boolean mine = false;
        int steps = 0;
        while (!stack.isEmpty()) {
            if (++steps > MAX_CHAIN) {
                throw new ConsistencyException(config.name(), target.get("_id"), "more than " + MAX_CHAIN
                        + " predecessors to commit first");
            }
            Document tx = reread(stack.peek());
            if (tx == null || COMMITTED.equals(tx.getString("proc"))) {
                stack.pop();
                continue;
            }
            Blocked blocked = new Blocked();
            Step step = commitOne(tx, blocked);
            if (step == Step.FOREIGN) {
                // not an entry this ledger wrote (the collection is writable by others): never applied, left alone
                return new Committed(rereadAnywhere(target), false, true);
            }
            if (step == Step.DONE) {
                stack.pop();
                mine |= stack.isEmpty();
            } else if (step == Step.BLOCKED) {
                Document predecessor = holder(blocked.account, blocked.seq);
                if (predecessor != null && onStack(stack, predecessor.get("_id"))
                        && config.seqAllocation() == SeqAllocation.COUNTER) {
                    // a cycle: transactions that reserved their numbers in opposite orders wait for each other.
                    // Move this one behind the others, then walk the chain again from the target: what the
                    // transactions below it on the stack wait for has changed
                    resequence(tx, Map.of());
                    stack.clear();
                    stack.push(target);
                } else if (predecessor != null) {
                    stack.push(predecessor);
                } else if (config.seqAllocation() == SeqAllocation.COUNTER && olderThan(tx, gapAfter)) {
                    // the transaction waiting reserved its number after the missing one: once it is this old, the
                    // missing append is presumed dead (a late one collides with the filler and takes new numbers)
                    fillGap(blocked.account, blocked.seq);
                } else {
                    LOG.debug("[{}] {} waits for seqId {} of {}, which is not in the log", config.name(),
                            tx.get("_id"), blocked.seq, blocked.account);
                    return new Committed(rereadAnywhere(target), false, true);
                }
            }
        }
        return new Committed(rereadAnywhere(target), mine, false);
    }

    private static boolean onStack(Deque<Document> stack, Object id) {
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
     * account caches have not passed) with cancelled gap entries. Its changes, values and id stay as they were, so a
     * reader counts it exactly as before; it only moves behind the transactions it conflicted with. Used to break a
     * wait cycle (numbers reserved from counters in opposite orders) and to repair an append made with a stale
     * process-local head. If another committer decided or moved it first, nothing happens here.
     *
     * @param cacheSeqs the accounts' cache seqIds where known: a held number at or below its account's is not filled
     */
    private void resequence(Document tx, Map<String, Long> cacheSeqs) {
        Object id = tx.get("_id");
        if (tx.getBoolean("decided", false)) {
            return;
        }
        List<Document> old = tx.getList(CHANGES, Document.class);
        Map<String, Long> fresh = new java.util.TreeMap<>();
        old.forEach(c -> fresh.put(c.getString(ACCOUNT), 0L));
        for (String account : List.copyOf(fresh.keySet())) {
            heads.remove(account);
            fresh.put(account, nextSeq(account));
        }
        List<Document> moved = new ArrayList<>();
        for (Document c : old) {
            moved.add(new Document(c).append(SEQ, fresh.get(c.getString(ACCOUNT))));
        }
        long changed;
        try {
            changed = config.retryPolicy().execute(config.name(), id, "resequence", () -> ledger.updateOne(
                    and(eq("_id", id), eq("proc", UNCOMMITTED), exists("decided", false), eq(CHANGES, old)),
                    Updates.set(CHANGES, moved)).getMatchedCount());
        } catch (MongoException e) {
            if (!MongoErrors.isDuplicateKey(e)) {
                throw e;
            }
            fresh.keySet().forEach(heads::remove);   // another append took a fresh number first: next pass
            return;
        }
        if (changed == 0) {
            return;
        }
        fresh.forEach(this::learn);
        LOG.info("[{}] transaction {} moved from {} to {}", config.name(), id,
                old.stream().map(c -> c.getString(ACCOUNT) + ":" + c.getLong(SEQ)).toList(), fresh);
        for (Document c : old) {
            if (c.getLong(SEQ) > cacheSeqs.getOrDefault(c.getString(ACCOUNT), 0L)) {
                fillGap(c.getString(ACCOUNT), c.getLong(SEQ));
            }
        }
    }

    private static final class Blocked {
        private String account;
        private long seq;
    }

    private Document reread(Document tx) {
        return config.retryPolicy().execute(config.name(), tx.get("_id"), "read transaction", () -> byId(tx.get("_id")));
    }

    /**
     * The transaction as it is now, in the ledger or, once an archiver moved it (only committed transactions are
     * moved), in the archive.
     */
    private Document rereadAnywhere(Document tx) {
        Document now = reread(tx);
        if (now != null) {
            return now;
        }
        return config.retryPolicy().execute(config.name(), tx.get("_id"), "read archived transaction",
                () -> archive.find(eq("_id", tx.get("_id"))).first());
    }

    private Document byId(Object id) {
        return ledger.find(eq("_id", id)).first();
    }

    private Document holder(String account, long seq) {
        return config.retryPolicy().execute(config.name(), account, "find predecessor",
                () -> ledger.find(elemMatch(CHANGES, and(eq(ACCOUNT, account), eq(SEQ, seq)))).first());
    }

    private boolean olderThan(Document tx, Duration age) {
        Date ts = tx.getDate("ts");
        return ts != null && (age.isZero() || !ts.after(clock.cutoff(age)));
    }

    /**
     * Why {@code tx}, read back from the log, is not an entry this ledger wrote, or null: anything read back from a
     * collection others can write is input again before it drives a write.
     */
    private String malformed(Document tx) {
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

    private Step commitOne(Document tx, Blocked blocked) {
        Object id = tx.get("_id");
        String foreign = malformed(tx);
        if (foreign != null) {
            LOG.warn("[{}] log entry {} is left alone: {}", config.name(), Inputs.show(id), foreign);
            return Step.FOREIGN;
        }
        List<Document> changes = tx.getList(CHANGES, Document.class);
        if (!tx.getBoolean("decided", false)) {
            Step decided = decide(tx, changes, blocked);
            if (decided != Step.DONE) {
                return decided;
            }
            tx = reread(tx);
            if (!tx.getBoolean("decided", false)) {
                return Step.RETRY;      // cancelled between our read and our decision: decide again
            }
            changes = tx.getList(CHANGES, Document.class);
        }
        // advance each account's cache by compare-and-set on its seqId: idempotent, in log order by construction
        for (Document c : changes) {
            String account = c.getString(ACCOUNT);
            long seq = c.getLong(SEQ);
            Bson previous = seq == 1 ? or(eq(SEQ, 0L), exists(SEQ, false)) : eq(SEQ, seq - 1);
            Bson update = Updates.combine(Updates.set(SEQ, seq), Updates.set(BALANCE, c.getLong(CACHE_BAL)));
            try {
                config.retryPolicy().run(config.name(), account, "advance account", () -> accounts.updateOne(
                        and(eq("_id", account), previous), update, new UpdateOptions().upsert(seq == 1)));
            } catch (MongoException e) {
                if (!MongoErrors.isDuplicateKey(e)) {
                    throw e;
                }
                // the account exists and is already past seqId 0: advanced before
            }
        }
        long marked = config.retryPolicy().execute(config.name(), id, "mark committed", () -> ledger.updateOne(
                and(eq("_id", id), eq("proc", UNCOMMITTED)),
                Updates.combine(Updates.set("proc", COMMITTED), Updates.currentDate("committedAt")))
                .getModifiedCount());
        if (marked > 0) {
            boolean valid = VALID.equals(tx.getString("state"));
            committed.increment();
            if (!valid) {
                cancelled.increment();
            }
            String reason = tx.getString("reason");
            LOG.debug("[{}] committed {} ({})", config.name(), id, valid ? "valid" : "cancelled: " + reason);
            notify(() -> listener.onCommitted(new OperationId(id), valid, reason));
        }
        return Step.DONE;
    }

    /**
     * Decides {@code tx} once every one of its accounts' caches stands just before its change: keeps it valid or
     * cancels it by the overdraft rule, and records every change's {@code cacheBal}, in one compare-and-set. The caches
     * cannot move until this transaction advances them, so every process computes the same decision.
     */
    private Step decide(Document tx, List<Document> changes, Blocked blocked) {
        Object id = tx.get("_id");
        Set<String> names = new HashSet<>();
        changes.forEach(c -> names.add(c.getString(ACCOUNT)));
        Map<String, Document> caches = new HashMap<>();
        config.retryPolicy().execute(config.name(), id, "read accounts", () -> accounts.find(in("_id", names))
                .into(new ArrayList<>())).forEach(d -> caches.put(d.getString("_id"), d));
        for (Document c : changes) {
            long cacheSeq = longOf(caches.get(c.getString(ACCOUNT)), SEQ);
            long seq = c.getLong(SEQ);
            if (cacheSeq >= seq) {
                // some process decided and began advancing: read the decision. Still undecided means the
                // transaction holds a number the account's cache has passed: it was appended from a process-local
                // head learned before an archive removed the entries whose unique keys would have refused it.
                // Its numbers are moved to fresh ones; until then balance() counts it like any undecided change
                Document now = reread(tx);
                if (now != null && !now.getBoolean("decided", false)) {
                    Document other = holder(c.getString(ACCOUNT), seq);
                    if (other != null && !Objects.equals(other.get("_id"), id)) {
                        throw new ConsistencyException(config.name(), id, "seqId " + seq + " of account "
                                + c.getString(ACCOUNT) + " is also held by transaction " + other.get("_id") + ": the"
                                + " unique index on {changes.account, changes.seqId} is missing (call ensureIndexes())");
                    }
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
        sets.add(Updates.set("state", valid ? VALID : CANCELLED));
        if (reason != null) {
            sets.add(Updates.set("reason", reason));
        }
        config.retryPolicy().run(config.name(), id, "decide", () -> ledger.updateOne(
                and(eq("_id", id), eq("proc", UNCOMMITTED), exists("decided", false), eq("state", state)),
                Updates.combine(sets)));
        // whether this call or another decided, the transaction is decided now (or was cancelled meanwhile: retry)
        return Step.DONE;
    }

    private void fillGap(String account, long seq) {
        Object id = "gap:" + account + ":" + seq;
        Document doc = new Document("proc", UNCOMMITTED).append("state", CANCELLED).append("reason", "gap")
                .append("h", "gap").append("transfer", false).append(CHANGES, List.of(new Document(ACCOUNT, account)
                        .append(TYPE, ChangeType.CREDIT.name()).append(VALUE, 0L).append(SEQ, seq)));
        try {
            config.retryPolicy().run(config.name(), id, "fill gap", () -> ledger.updateOne(
                    and(eq("_id", id), exists("proc", false)),
                    Updates.combine(Updates.setOnInsert(doc), Updates.currentDate("ts")),
                    new UpdateOptions().upsert(true)));
            gapsFilled.increment();
            LOG.info("[{}] filled the gap at seqId {} of {} left by an append that never happened", config.name(),
                    seq, account);
        } catch (MongoException e) {
            if (!MongoErrors.isDuplicateKey(e)) {
                throw e;
            }
            // filled already, or the late append arrived
        }
    }

    /** Commits every transaction uncommitted for longer than {@code staleAfter}, in log order per account. */
    public RecoveryReport commitPending(Duration staleAfter) {
        long start = System.nanoTime();
        Bson filter = staleAfter.isZero() ? eq("proc", UNCOMMITTED)
                : and(eq("proc", UNCOMMITTED), lte("ts", clock.cutoff(staleAfter)));
        int examined = 0;
        int forward = 0;
        int back = 0;
        int skipped = 0;
        List<Document> pending = config.retryPolicy().execute(config.name(), null, "find uncommitted",
                () -> ledger.find(filter).sort(Sorts.ascending("ts")).projection(Projections.include("_id"))
                        .into(new ArrayList<>()));
        for (Document found : pending) {
            examined++;
            Committed c = commitChain(found, staleAfter);
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
            LOG.info("[{}] committer committed {} transactions ({} cancelled), {} already done or blocked",
                    config.name(), forward + back, back, skipped);
        }
        return new RecoveryReport(config.name(), examined, forward, back, skipped,
                Duration.ofNanos(System.nanoTime() - start));
    }

    // ---------------------------------------------------------------- cancel and reverse

    /** Cancels {@code id} if the committer has not decided it yet. */
    public void cancel(Object id) {
        Inputs.operationId(config.name(), "id", id);
        long matched = config.retryPolicy().execute(config.name(), id, "cancel", () -> ledger.updateOne(
                and(eq("_id", id), eq("proc", UNCOMMITTED), exists("decided", false)),
                Updates.combine(Updates.set("state", CANCELLED), Updates.set("reason", "cancelled")))
                .getMatchedCount());
        if (matched > 0) {
            return;
        }
        Document tx = byId(id);
        if (tx == null) {
            throw new UnknownTransactionException(config.name(), id);
        }
        if (!CANCELLED.equals(tx.getString("state"))) {
            throw new TransactionCommittedException(config.name(), id);
        }
    }

    /** The compensating transaction of {@code id}, appended (idempotently) as {@code <id>:reversal}. */
    public Prepared reversalOf(Object id) {
        Inputs.operationId(config.name(), "id", id);
        Document tx = byId(id);
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
        Prepared p = prepare(reversal);
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
        Document cache = accounts.find(eq("_id", account)).projection(Projections.include(SEQ)).first();
        long upTo = Math.min(longOf(cache, SEQ), afterSeq + limit);
        if (upTo <= afterSeq) {
            return List.of();
        }
        Map<Long, LedgerEntry> found = new HashMap<>();
        for (MongoCollection<Document> source : List.of(ledger, archive)) {
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
                                found.putIfAbsent(c.getLong(SEQ), new LedgerEntry(new OperationId(d.get("_id")),
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
        accounts.find(gt(SEQ, 0L)).projection(Projections.include("_id")).forEach(d -> ids.add(d.getString("_id")));
        return ids;
    }

    // ---------------------------------------------------------------- reconcile

    /** Folds {@code account}'s log and compares it with the cache and every recorded {@code cacheBal}. */
    public ReconcileReport reconcile(String account, boolean repair) {
        Document cache = accounts.find(eq("_id", account)).first();
        long cacheSeq = longOf(cache, SEQ);
        long cacheBalance = longOf(cache, BALANCE);
        long expected = checkpointSeq(cache) + 1;
        long running = cache != null && cache.get(CHECKPOINT) instanceof Document cp ? longOf(cp, BALANCE) : 0L;
        long atCache = expected - 1 == cacheSeq ? running : Long.MIN_VALUE;
        long everything = running;
        long head = expected - 1;
        List<String> problems = new ArrayList<>();
        List<String> repaired = new ArrayList<>();
        long from = expected - 1;
        try (MongoCursor<Document> changes = ledger.aggregate(List.of(
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
                        long fixed = running;
                        ledger.updateOne(and(eq("_id", d.get("_id")), elemMatch(CHANGES, and(eq(ACCOUNT, account),
                                eq(SEQ, seq)))), Updates.set(CHANGES + ".$." + CACHE_BAL, fixed));
                        repaired.add("cacheBal of seqId " + seq + " set to " + fixed);
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
            if (repair) {
                long fixed = atCache;
                accounts.updateOne(and(eq("_id", account), eq(SEQ, cacheSeq), eq(BALANCE, cacheBalance)),
                        Updates.set(BALANCE, fixed));
                repaired.add("cache balance set to " + fixed);
            }
        }
        for (String problem : problems) {
            LOG.warn("[{}] reconcile {}: {}", config.name(), account, problem);
            notify(() -> listener.onMismatch(account, problem));
        }
        return new ReconcileReport(account, head, cacheSeq, cacheBalance,
                atCache == Long.MIN_VALUE ? running : atCache, everything, problems, repaired);
    }

    /** Accounts whose log has a hole: found by one pass over every change. */
    public List<String> accountsWithGaps() {
        Map<String, Long> checkpoints = new HashMap<>();
        accounts.find(exists(CHECKPOINT)).forEach(d -> checkpoints.put(d.getString("_id"), checkpointSeq(d)));
        List<String> gaps = new ArrayList<>();
        ledger.aggregate(List.of(Aggregates.unwind("$" + CHANGES), Aggregates.group("$" + CHANGES + "." + ACCOUNT,
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

    // ---------------------------------------------------------------- archive and status

    /**
     * Moves committed transactions appended longer than {@code olderThan} ago to the archive: copy, raise each
     * account's checkpoint, delete. Balances stay exact (they start from the cache, which is at or past every
     * checkpoint); reconcile folds from the checkpoint.
     */
    public int archive(Duration olderThan) {
        Date cutoff = clock.cutoff(olderThan);
        int moved = 0;
        List<Document> old = ledger.find(and(eq("proc", COMMITTED), lte("ts", cutoff)))
                .sort(Sorts.ascending("ts")).into(new ArrayList<>());
        for (Document tx : old) {
            Object id = tx.get("_id");
            config.retryPolicy().run(config.name(), id, "archive copy",
                    () -> archive.replaceOne(eq("_id", id), tx, new ReplaceOptions().upsert(true)));
            for (Document c : tx.getList(CHANGES, Document.class)) {
                String account = c.getString(ACCOUNT);
                long seq = c.getLong(SEQ);
                Document checkpoint = new Document(SEQ, seq).append(BALANCE, c.getLong(CACHE_BAL));
                config.retryPolicy().run(config.name(), account, "raise checkpoint", () -> accounts.updateOne(
                        and(eq("_id", account), or(exists(CHECKPOINT, false), lte(CHECKPOINT + "." + SEQ, seq - 1))),
                        Updates.set(CHECKPOINT, checkpoint)));
            }
            config.retryPolicy().run(config.name(), id, "archive delete", () -> ledger.deleteOne(
                    and(eq("_id", id), eq("proc", COMMITTED))));
            moved++;
            archived.increment();
        }
        return moved;
    }

    /** Transactions appended longer than {@code staleAfter} ago and not committed yet, oldest first. */
    public List<InterruptedOperation> interrupted(Duration staleAfter, int limit) {
        List<InterruptedOperation> out = new ArrayList<>();
        for (Document tx : ledger.find(and(eq("proc", UNCOMMITTED), lte("ts", clock.cutoff(staleAfter))))
                .projection(Projections.include("ts", CHANGES + "." + ACCOUNT)).sort(Sorts.ascending("ts"))
                .limit(limit)) {
            List<Object> touched = new ArrayList<>();
            tx.getList(CHANGES, Document.class, List.of()).forEach(c -> touched.add(c.get(ACCOUNT)));
            out.add(new InterruptedOperation(tx.get("_id"), UNCOMMITTED, clock.ageOf(tx.getDate("ts").toInstant()),
                    "accounts " + touched));
        }
        return out;
    }

    /** Transactions by {@code proc}; the oldest uncommitted one's age. */
    public StrategyStatus status() {
        Map<String, Long> counts = new HashMap<>();
        counts.put(UNCOMMITTED, ledger.countDocuments(eq("proc", UNCOMMITTED)));
        counts.put(COMMITTED, ledger.countDocuments(eq("proc", COMMITTED)));
        Document oldest = ledger.find(eq("proc", UNCOMMITTED)).sort(Sorts.ascending("ts"))
                .projection(Projections.include("ts")).first();
        Optional<Duration> age = Optional.ofNullable(oldest).map(d -> d.getDate("ts"))
                .map(ts -> clock.ageOf(ts.toInstant()));
        return new StrategyStatus(config.name(), counts, counts.get(UNCOMMITTED), age);
    }

    /** The counters since this engine was built. */
    public LedgerMetrics metrics() {
        return new LedgerMetrics(appended.sum(), collisions.sum(), headQueries.sum(), committed.sum(), cancelled.sum(),
                gapsFilled.sum(), archived.sum());
    }

    // ---------------------------------------------------------------- helpers

    static long longOf(Document doc, String field) {
        return doc != null && doc.get(field) instanceof Number n ? n.longValue() : 0L;
    }

    private static long checkpointSeq(Document cache) {
        return cache != null && cache.get(CHECKPOINT) instanceof Document cp ? longOf(cp, SEQ) : 0L;
    }

    private void notify(Runnable call) {
        Listeners.call(config.name(), call);
    }
}
