package dev.consistencykit.logreconciliation.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.elemMatch;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Filters.or;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.ACCOUNT;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.ARCHIVED_ID;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.BALANCE;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.CACHE_BAL;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.CANCELED;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.CHANGES;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.CHECKPOINT;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.COMMITTED;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.HEAD;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.SEQ;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.SEQ_KEY;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.UNCOMMITTED;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.archiveKey;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.fromArchive;

import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.CountOptions;
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
import dev.consistencykit.core.KeptRecord;
import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.ConditionalUpdates;
import dev.consistencykit.core.spi.MongoErrors;
import dev.consistencykit.core.spi.OwnerIds;
import dev.consistencykit.core.spi.PatternRegistry;
import dev.consistencykit.core.spi.PatternSetup;
import dev.consistencykit.core.spi.ReadSettings;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.core.spi.RequiredIndexes;
import dev.consistencykit.core.spi.StateSnapshot;
import dev.consistencykit.core.spi.WriteConcerns;
import dev.consistencykit.logreconciliation.ChangeType;
import dev.consistencykit.logreconciliation.LedgerConfig;

/**
 * The only owner of the ledger's collections — the log of transactions, the accounts' caches, the archive — offering
 * its writes by name (append, resequence, decide, cancel, mark committed, advance an account, fill a gap, archive) and
 * the reads its parts make. Each call is retried by the instance's retry policy where repeating it is safe; the
 * conditions that make it safe are in the filters here. It also holds what this instance wrote and has not released
 * yet ({@link RecordReleases}).
 */
public final class LedgerStore implements PatternSetup {

    private final LedgerConfig config;
    private final String name;
    private final RetryPolicy retry;
    private final MongoDatabase database;
    private final MongoCollection<Document> ledger;
    private final MongoCollection<Document> accounts;
    private final MongoCollection<Document> archive;
    /**
     * The unique sequence index ({@link LedgerSchema#SEQ_KEY}): what makes two appenders of one seqId collide, and
     * where the collections may live on a sharded cluster; checked before the first write.
     */
    private final RequiredIndexes requiredIndexes;
    /** Transactions this instance appended, to release so that the archive may move them once committed. */
    private final RecordReleases releases;
    /** One nonce per append call: what its record carries until released. */
    private final Supplier<String> nonces;

    /** The collections of {@code config} in {@code database} (already checked for an acknowledged write concern). */
    public LedgerStore(LedgerConfig config, MongoDatabase database) {
        this.database = ReadSettings.ownReads(database);
        this.config = config;
        this.name = config.name();
        this.retry = config.retryPolicy();
        this.ledger = this.database.getCollection(config.ledgerCollection());
        this.accounts = this.database.getCollection(config.accountsCollection());
        this.archive = this.database.getCollection(config.archiveCollection());
        this.requiredIndexes = new RequiredIndexes(name, this.database, List.of(new RequiredIndexes.Unique(ledger,
                "account_seq_unique", List.of(CHANGES + "." + SEQ_KEY), false, CHANGES)), List.of(
                RequiredIndexes.Placement.byId(accounts, "reserves sequence numbers with findOneAndUpdate by _id and"
                        + " keeps one cache per account by _id, which stays unique across shards only on a shard key"
                        + " led by _id"),
                RequiredIndexes.Placement.byId(archive, "keeps one archived copy per transaction by _id (an upsert),"
                        + " which stays unique across shards only on a shard key led by _id")));
        this.releases = new RecordReleases(name, ledger, retry);
        this.nonces = OwnerIds.sequence(name);
    }

    // ---------------------------------------------------------------- setup and holds

    /** The unique sequence index, the committer's and archiver's index, and the archive's. */
    @Override
    public void ensureIndexes() {
        requiredIndexes.create();
        RecordReleases.ensureIndex(ledger);
        ledger.createIndex(Indexes.ascending(CHANGES + "." + ACCOUNT, CHANGES + "." + SEQ),
                new IndexOptions().name("account_seq"));
        ledger.createIndex(Indexes.ascending("proc", "ts"), new IndexOptions().name("proc_ts"));
        archive.createIndex(Indexes.ascending(CHANGES + "." + ACCOUNT, CHANGES + "." + SEQ),
                new IndexOptions().name("account_seq"));
        archive.createIndex(Indexes.ascending("_id." + ARCHIVED_ID), new IndexOptions().name("transaction_id"));
        PatternRegistry.register(database, new PatternRegistry.Registration("log-reconciliation", config.name(),
                Map.of("ledger", config.ledgerCollection(), "accounts", config.accountsCollection(), "archive",
                        config.archiveCollection()), Map.of()));
    }

    @Override
    public List<String> setupProblems() {
        return requiredIndexes.problems();
    }

    /** Releases the transactions this instance appended and still holds. */
    @Override
    public void close() {
        releases.flush();
    }

    /** Throws unless the unique sequence index exists (checked once, then remembered). */
    void verifyIndexes() {
        requiredIndexes.verify();
    }

    /** A fresh nonce for one append call. */
    String nonce() {
        return nonces.get();
    }

    /** Notes that this instance wrote {@code id} with {@code nonce}: it is held until released. */
    void written(Object id, String nonce) {
        releases.written(id, nonce);
    }

    /** Transactions their appenders have not released, appended before {@code cutoff}. */
    List<KeptRecord> kept(ServerClock clock, Date cutoff, int limit) {
        return RecordReleases.kept(ledger, "ts", clock, cutoff, limit);
    }

    // ---------------------------------------------------------------- appends

    /**
     * Inserts transaction {@code id} unless a transaction of that id exists: true if this request wrote it, false if
     * the server refused one of its sequence keys (taken by another transaction, or being inserted by another at the
     * same moment, which DocumentDB reports as a write conflict) or the id existed.
     */
    boolean append(Object id, Document doc) {
        try {
            return retry.execute(name, id, "append", () -> {
                try {
                    ledger.updateOne(and(eq("_id", id), exists("proc", false)),
                            Updates.combine(Updates.setOnInsert(doc), Updates.currentDate("ts")),
                            new UpdateOptions().upsert(true));
                    return true;
                } catch (MongoException e) {
                    if (!MongoErrors.isWriteConflict(e)) {
                        throw e;
                    }
                    // another appender was inserting one of these sequence keys at the same moment; DocumentDB keeps
                    // a unique index as an exclusion constraint, where two such inserts deadlock and one is rolled
                    // back. Like a collision: the caller reads whether it landed, else numbers again
                    return false;
                }
            });
        } catch (MongoException e) {
            if (!MongoErrors.isDuplicateKey(e)) {
                throw e;
            }
            return false;
        }
    }

    /**
     * Inserts a void change (canceled, value 0, id {@code gap:<account>:<seq>}) at {@code account}'s {@code seq}
     * unless a transaction holds it; false if one did (filled already, or the append it was reserved for landed).
     */
    boolean fillGap(String account, long seq) {
        verifyIndexes();
        Object id = "gap:" + account + ":" + seq;
        Document doc = new Document("proc", UNCOMMITTED).append("state", CANCELED).append("reason", "gap")
                .append("h", "gap").append("transfer", false).append(CHANGES, List.of(LedgerSchema.change(account,
                        ChangeType.CREDIT.name(), 0L, seq)));
        try {
            retry.run(name, id, "fill gap", () -> ledger.updateOne(and(eq("_id", id), exists("proc", false)),
                    Updates.combine(Updates.setOnInsert(doc), Updates.currentDate("ts")),
                    new UpdateOptions().upsert(true)));
            return true;
        } catch (MongoException e) {
            if (!MongoErrors.isDuplicateKey(e)) {
                throw e;
            }
            return false;
        }
    }

    /** Waits until transaction {@code id}, found rather than written, is as durable as the write concern asks. */
    void confirmAppended(Object id) {
        retry.run(name, id, "confirm append", () -> WriteConcerns.confirm(ledger, id, name, "append"));
    }

    /** The sequence keys among {@code keys} some transaction in the log holds. */
    Set<String> takenSeqKeys(Object id, List<String> keys) {
        Set<String> taken = new HashSet<>();
        retry.run(name, id, "probe seqIds", () -> {
            taken.clear();
            ledger.find(in(CHANGES + "." + SEQ_KEY, keys)).projection(Projections.include(CHANGES + "." + SEQ_KEY))
                    .forEach(d -> {
                        for (Document c : d.getList(CHANGES, Document.class, List.of())) {
                            if (c.get(SEQ_KEY) instanceof String key) {
                                taken.add(key);
                            }
                        }
                    });
        });
        return taken;
    }

    /** Takes the next seqId of {@code account} from its counter (seqAllocation COUNTER). */
    long reserveSeq(String account) {
        Document after = retry.execute(name, account, "reserve seqId", () -> accounts.findOneAndUpdate(
                eq("_id", account), Updates.combine(Updates.inc(HEAD, 1L), Updates.currentDate("headAt")),
                new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.AFTER)
                        .projection(Projections.include(HEAD))));
        return after.getLong(HEAD);
    }

    /**
     * The transactions holding a change of {@code account} after {@code floor}, each projected to that change alone
     * ($elemMatch projection; the positional one is wrong on the embedded server).
     */
    List<Document> changesAfter(String account, long floor) {
        return retry.execute(name, account, "read head", () -> ledger.find(changesOf(account, gt(SEQ, floor)))
                .projection(Projections.elemMatch(CHANGES, and(eq(ACCOUNT, account), gt(SEQ, floor))))
                .into(new ArrayList<>()));
    }

    // ---------------------------------------------------------------- commits

    /**
     * Moves an undecided transaction's changes to fresh seqIds, if it still holds {@code old}; how many matched.
     * Throws the server's duplicate-key error if another append took one of the fresh numbers first.
     */
    long resequence(Object id, List<Document> old, List<Document> moved) {
        return retry.execute(name, id, "resequence", () -> ledger.updateOne(
                and(eq("_id", id), eq("proc", UNCOMMITTED), exists("decided", false), eq(CHANGES, old)),
                Updates.set(CHANGES, moved)).getMatchedCount());
    }

    /**
     * Records the decision on an undecided transaction still in {@code state} and still holding exactly {@code changes}:
     * a decision is taken for the numbers its transaction held when the caches were read, and a transaction another
     * committer moved to fresh numbers meanwhile ({@link #resequence}) stands elsewhere in its accounts' logs, where
     * that decision (its {@code cacheBal}s, the overdraft rule against the balances before it) means nothing.
     */
    void decide(Object id, String state, List<Document> changes, List<Bson> sets) {
        retry.run(name, id, "decide", () -> ledger.updateOne(
                and(eq("_id", id), eq("proc", UNCOMMITTED), exists("decided", false), eq("state", state),
                        eq(CHANGES, changes)), Updates.combine(sets)));
    }

    /** Cancels an undecided transaction; how many matched. */
    long cancel(Object id) {
        return retry.execute(name, id, "cancel", () -> ledger.updateOne(
                and(eq("_id", id), eq("proc", UNCOMMITTED), exists("decided", false)),
                Updates.combine(Updates.set("state", CANCELED), Updates.set("reason", "canceled")))
                .getMatchedCount());
    }

    /**
     * Moves {@code account}'s cache to {@code seq} with the balance after it, if it is at the seqId before; creates it
     * for seqId 1. A cache already past it (advanced before) is left alone. Returns true when the cache stands at
     * {@code seq} or past it now; false when it stands below {@code seq - 1}, where no decided change can find it.
     */
    boolean advanceAccount(String account, long seq, long balance) {
        Bson previous = seq == 1 ? or(eq(SEQ, 0L), exists(SEQ, false)) : eq(SEQ, seq - 1);
        Bson update = Updates.combine(Updates.set(SEQ, seq), Updates.set(BALANCE, balance));
        try {
            if (retry.execute(name, account, "advance account", () -> accounts.updateOne(
                    and(eq("_id", account), previous), update, new UpdateOptions().upsert(seq == 1))
                    .getMatchedCount()) > 0) {
                return true;
            }
        } catch (MongoException e) {
            if (!MongoErrors.isDuplicateKey(e)) {
                throw e;
            }
            // the account exists and is already past seqId 0: advanced before
            return true;
        }
        // advanced before (by an earlier attempt whose reply was lost, or another committer), or not reachable
        Document cache = account(account, "read account");
        return cache != null && LedgerSchema.longOf(cache, SEQ) >= seq;
    }

    /** Marks an uncommitted transaction committed; how many changed. */
    long markCommitted(Object id) {
        return retry.execute(name, id, "mark committed", () -> ledger.updateOne(
                and(eq("_id", id), eq("proc", UNCOMMITTED)),
                Updates.combine(Updates.set("proc", COMMITTED), Updates.currentDate("committedAt")))
                .getModifiedCount());
    }

    /** The transaction holding {@code account}'s change at {@code seq}; {@code null} if none. */
    Document holder(String account, long seq) {
        return retry.execute(name, account, "find predecessor",
                () -> ledger.find(eq(CHANGES + "." + SEQ_KEY, LedgerSchema.seqKey(account, seq))).first());
    }

    /** The ids of the transactions holding {@code account}'s change at {@code seq}, by the unique key (two at most). */
    List<Object> holderIds(String account, long seq) {
        return retry.execute(name, account, "find holders", () -> {
            List<Object> ids = new ArrayList<>();
            ledger.find(eq(CHANGES + "." + SEQ_KEY, LedgerSchema.seqKey(account, seq)))
                    .projection(Projections.include("_id")).limit(2).forEach(d -> ids.add(d.get("_id")));
            return ids;
        });
    }

    /** The ids of the transactions matching {@code filter}, oldest first. */
    List<Document> idsOf(Bson filter) {
        return retry.execute(name, null, "find uncommitted", () -> ledger.find(filter).sort(Sorts.ascending("ts"))
                .projection(Projections.include("_id")).into(new ArrayList<>()));
    }

    // ---------------------------------------------------------------- transactions

    /** Transaction {@code id} as it is in the log; {@code null} if it is not there. Not retried. */
    Document byId(Object id) {
        return ledger.find(eq("_id", id)).first();
    }

    /** {@code tx} as it is in the log now; {@code null} if it left it. */
    Document reread(Document tx) {
        return retry.execute(name, tx.get("_id"), "read transaction", () -> byId(tx.get("_id")));
    }

    /**
     * The transaction as it is now, in the ledger or, once an archiver moved it (only committed transactions are
     * moved), in the archive.
     */
    Document rereadAnywhere(Document tx) {
        Document now = reread(tx);
        if (now != null) {
            return now;
        }
        Object id = tx.get("_id");
        Document archived = retry.execute(name, id, "read archived transaction",
                () -> archive.find(eq("_id", archiveKey(tx))).first());
        if (archived == null) {
            // moved to fresh numbers after the version this call read: the latest copy archived under its id
            archived = retry.execute(name, id, "read archived transaction", () -> latestArchived(id));
        }
        if (archived == null) {
            throw new ConsistencyException(name, id, "transaction " + id + " is neither in the log nor in"
                    + " its archive: something outside this ledger deleted it");
        }
        return fromArchive(archived);
    }

    /** The latest copy of transaction {@code id} in the archive; {@code null} if none. Not retried. */
    Document latestArchived(Object id) {
        return archive.find(eq("_id." + ARCHIVED_ID, id)).sort(Sorts.descending("ts")).first();
    }

    /** How many transactions were committed after {@code since}, counted up to {@code cap}. */
    long countCommittedSince(Date since, int cap) {
        return ledger.countDocuments(and(eq("proc", COMMITTED), gt("ts", since)), new CountOptions().limit(cap));
    }

    /** Transactions appended before {@code cutoff} and not committed, oldest first, their accounts only. */
    List<Document> uncommittedBefore(Date cutoff, int limit) {
        return ledger.find(and(eq("proc", UNCOMMITTED), lte("ts", cutoff)))
                .projection(Projections.include("ts", CHANGES + "." + ACCOUNT)).sort(Sorts.ascending("ts"))
                .limit(limit).into(new ArrayList<>());
    }

    /** The transactions by {@code proc}, from one pass. */
    StateSnapshot snapshot() {
        return StateSnapshot.of(ledger, "proc", "ts");
    }

    // ---------------------------------------------------------------- archive

    /** Committed transactions appended before {@code cutoff} that their appenders released, oldest first. */
    List<Document> archivable(Date cutoff) {
        return ledger.find(and(eq("proc", COMMITTED), lte("ts", cutoff), RecordReleases.released()))
                .sort(Sorts.ascending("ts")).into(new ArrayList<>());
    }

    /** Copies a committed transaction into the archive under its archive key (again: the same copy). */
    void archiveCopy(Object id, Document copy) {
        retry.run(name, id, "archive copy", () -> archive.replaceOne(eq("_id", copy.get("_id")), copy,
                new ReplaceOptions().upsert(true)));
    }

    /** Raises {@code account}'s checkpoint to {@code checkpoint} (seqId and balance) if it is below. */
    void raiseCheckpoint(String account, long seq, Document checkpoint) {
        retry.run(name, account, "raise checkpoint", () -> accounts.updateOne(
                and(eq("_id", account), or(exists(CHECKPOINT, false), lte(CHECKPOINT + "." + SEQ, seq - 1))),
                Updates.set(CHECKPOINT, checkpoint)));
    }

    /** Deletes an archived transaction from the log (only while committed). */
    void deleteArchived(Object id) {
        retry.run(name, id, "archive delete", () -> ConditionalUpdates.delete(ledger, id, eq("proc", COMMITTED)));
    }

    // ---------------------------------------------------------------- accounts and reads

    /** {@code account}'s cache document, every field; {@code null} if none. Read for {@code what}, retried. */
    Document account(String account, String what) {
        return retry.execute(name, account, what, () -> accounts.find(eq("_id", account)).first());
    }

    /** {@code account}'s cache document, every field; {@code null} if none. Not retried. */
    Document account(String account) {
        return accounts.find(eq("_id", account)).first();
    }

    /** The cache documents of {@code names} that exist, by name, with {@code fields} (all when none). */
    Map<String, Document> accounts(Object operationId, String what, Set<String> names, String... fields) {
        Map<String, Document> byName = new HashMap<>();
        retry.execute(name, operationId, what, () -> {
            byName.clear();
            var find = accounts.find(in("_id", names));
            if (fields.length > 0) {
                find = find.projection(Projections.include(fields));
            }
            find.forEach(d -> {
                if (d.get("_id") instanceof String account) {
                    byName.put(account, d);
                }
            });
            return byName.size();
        });
        return byName;
    }

    /** The transactions matching {@code filter} with their changes, state and decision, by id. */
    List<Document> transactions(Object operationId, String what, Bson filter) {
        return retry.execute(name, operationId, what, () -> {
            Map<Object, Document> byId = new LinkedHashMap<>();
            ledger.find(filter).projection(Projections.include(CHANGES, "state", "decided"))
                    .forEach(d -> byId.put(d.get("_id"), d));
            return new ArrayList<>(byId.values());
        });
    }

    /** Accounts with a cache past seqId 0, in id order. */
    List<String> accountIds() {
        List<String> ids = new ArrayList<>();
        // sorted by _id: an unsorted scan of several batches returns some documents twice on DocumentDB
        accounts.find(gt(SEQ, 0L)).projection(Projections.include("_id")).sort(Sorts.ascending("_id"))
                .forEach(d -> ids.add(d.getString("_id")));
        return ids;
    }

    /** The checkpoint seqId of every account that has one. */
    Map<String, Long> checkpoints() {
        Map<String, Long> out = new HashMap<>();
        accounts.find(exists(CHECKPOINT)).forEach(d -> out.put(d.getString("_id"), LedgerSchema.checkpointSeq(d)));
        return out;
    }

    /**
     * {@code account}'s changes with seqIds in {@code (after, upTo]}, each with its transaction: from the log, or with
     * {@code archived} from the archive.
     */
    List<Document> changesOf(String account, long after, long upTo, boolean archived) {
        return (archived ? archive : ledger).aggregate(List.of(
                Aggregates.match(changesOf(account, gt(SEQ, after), lte(SEQ, upTo))),
                Aggregates.unwind("$" + CHANGES),
                Aggregates.match(and(eq(CHANGES + "." + ACCOUNT, account), gt(CHANGES + "." + SEQ, after),
                        lte(CHANGES + "." + SEQ, upTo))))).into(new ArrayList<>());
    }

    /**
     * The transactions holding a change of {@code account} whose seqId meets every one of {@code seqBounds} (each a
     * condition on {@link LedgerSchema#SEQ}): the {@code $elemMatch} that says so, and beside it the account's name on
     * the dotted path {@code changes.account}, which adds nothing the {@code $elemMatch} does not imply, so never
     * changes what matches. It is what lets the real engine read {@code account_seq} for it: given the
     * {@code $elemMatch} alone it reads every document of the collection (100,000 to return 10, 88 ms; by the name,
     * the account's 200 changes, 1.1 ms; EXPLAIN ANALYZE, 2026-11-30). The seqId bounds stay inside the
     * {@code $elemMatch}: on the dotted path that engine reads a range across every account (92 ms for
     * {@code seqId > 0}).
     */
    static Bson changesOf(String account, Bson... seqBounds) {
        List<Bson> element = new ArrayList<>();
        element.add(eq(ACCOUNT, account));
        element.addAll(List.of(seqBounds));
        return and(eq(CHANGES + "." + ACCOUNT, account), elemMatch(CHANGES, and(element)));
    }

    /** {@code account}'s changes after {@code after} in the log, in seqId order, each with its transaction. */
    MongoCursor<Document> changesInOrder(String account, long after) {
        return ledger.aggregate(List.of(
                Aggregates.match(changesOf(account, gt(SEQ, after))),
                Aggregates.unwind("$" + CHANGES),
                Aggregates.match(and(eq(CHANGES + "." + ACCOUNT, account), gt(CHANGES + "." + SEQ, after))),
                Aggregates.sort(Sorts.ascending(CHANGES + "." + SEQ)))).iterator();
    }

    /** Per account in the log: how many changes, the lowest and the highest seqId ({@code n}, {@code min}, {@code max}).
     */
    List<Document> seqRanges() {
        return ledger.aggregate(List.of(Aggregates.unwind("$" + CHANGES), Aggregates.group("$" + CHANGES + "."
                + ACCOUNT, Accumulators.sum("n", 1), Accumulators.max("max", "$" + CHANGES + "." + SEQ),
                Accumulators.min("min", "$" + CHANGES + "." + SEQ)))).into(new ArrayList<>());
    }

    /** Sets the account's cache balance to {@code fixed} if the cache is still as the fold read it; whether it was. */
    boolean repairCacheBalance(String account, long seq, long balance, Bson checkpoint, long fixed) {
        return accounts.updateOne(and(eq("_id", account), eq(SEQ, seq), eq(BALANCE, balance), checkpoint),
                Updates.set(BALANCE, fixed)).getMatchedCount() == 1;
    }

    /** Sets the recorded balance after {@code account}'s change at {@code seq} in transaction {@code id}. */
    void repairCacheBal(Object id, String account, long seq, long fixed) {
        ledger.updateOne(and(eq("_id", id), elemMatch(CHANGES, and(eq(ACCOUNT, account), eq(SEQ, seq)))),
                Updates.set(CHANGES + ".$." + CACHE_BAL, fixed));
    }
}
