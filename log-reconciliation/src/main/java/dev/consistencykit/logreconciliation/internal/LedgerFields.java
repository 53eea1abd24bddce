package dev.consistencykit.logreconciliation.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Sorts;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.Listeners;
import dev.consistencykit.core.spi.OwnerIds;
import dev.consistencykit.core.spi.PatternRegistry;
import dev.consistencykit.core.spi.ReadSettings;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.core.spi.RequiredIndexes;
import dev.consistencykit.logreconciliation.LedgerConfig;
import dev.consistencykit.logreconciliation.LedgerListener;
import dev.consistencykit.logreconciliation.LedgerState;

/**
 * The ledger's stored fields, collections and counters, and the helpers every part of the {@link LedgerEngine}
 * uses.
 */
final class LedgerFields {

    /** Stored {@code proc} of a transaction not yet committed. */
    public static final String UNCOMMITTED = LedgerState.UNCOMMITTED.stored();
    /** Stored {@code proc} of a committed transaction. */
    public static final String COMMITTED = LedgerState.COMMITTED.stored();
    /** Stored {@code state} of a transaction whose changes count. */
    public static final String VALID = LedgerState.VALID;
    /** Stored {@code state} of a transaction whose changes do not count. */
    public static final String CANCELED = LedgerState.CANCELED.stored();

    static final Logger LOG = LoggerFactory.getLogger(LedgerEngine.class);
    static final String CHANGES = "changes";
    static final String ACCOUNT = "account";
    static final String SEQ = "seqId";
    /**
     * A change's place in its account's log as one value, {@code "<seqId>:<account>"}: what the unique index keeps
     * unique. One field, so that every server makes one index key per change; a unique index over two fields of one
     * array ({@code changes.account}, {@code changes.seqId}) gets one key per element on MongoDB but one per
     * combination of elements on others (DocumentDB), where it refuses appends MongoDB accepts.
     */
    static final String SEQ_KEY = "k";
    static final String VALUE = "value";
    static final String TYPE = "type";
    static final String CACHE_BAL = "cacheBal";
    static final String BALANCE = "balance";
    static final String HEAD = "head";
    static final String CHECKPOINT = "checkpoint";
    /**
     * The most sequence-number collisions one append survives, within its call's deadline: a bound for a server with
     * no deadline set, far beyond what contention alone produces (each collision moves the append to a number nobody
     * held a moment before).
     */
    static final int MAX_APPEND_ATTEMPTS = 1_000;
    /** How many numbers past the one it collided on an append probes for each account in one indexed read. */
    static final int PROBE_WINDOW = 16;
    static final int MAX_CHAIN = 10_000;

    final LedgerConfig config;
    final MongoCollection<Document> ledger;
    final MongoCollection<Document> accounts;
    final MongoCollection<Document> archive;
    final MongoDatabase database;
    final ConsistentBalances consistentBalances;
    final ServerClock clock;
    final LedgerListener listener;
    final Map<String, Long> heads = new ConcurrentHashMap<>();
    /**
     * The unique sequence index ({@link #SEQ_KEY}): what makes two appenders of one seqId collide, checked before the
     * first write.
     */
    final RequiredIndexes requiredIndexes;
    /** Transactions this instance appended, to release so that the archive may move them once committed. */
    final RecordReleases releases;
    /** One nonce per append call: what its record carries until released. */
    final Supplier<String> nonces;

    final LongAdder appended = new LongAdder();
    final LongAdder collisions = new LongAdder();
    final LongAdder headQueries = new LongAdder();
    final LongAdder committed = new LongAdder();
    final LongAdder canceled = new LongAdder();
    final LongAdder gapsFilled = new LongAdder();
    final LongAdder archived = new LongAdder();

    /** Builds the engine's state (see {@link LedgerEngine}). */
    LedgerFields(LedgerConfig config, MongoDatabase database, ServerClock clock, LedgerListener listener) {
        database = ReadSettings.ownReads(database);
        this.config = Objects.requireNonNull(config, "config");
        this.ledger = database.getCollection(config.ledgerCollection());
        this.accounts = database.getCollection(config.accountsCollection());
        this.archive = database.getCollection(config.archiveCollection());
        this.database = database;
        this.requiredIndexes = new RequiredIndexes(config.name(), List.of(new RequiredIndexes.Unique(ledger,
                "account_seq_unique", List.of(CHANGES + "." + SEQ_KEY), false, CHANGES)));
        this.releases = new RecordReleases(config.name(), ledger, config.retryPolicy());
        this.nonces = OwnerIds.sequence(config.name());
        this.consistentBalances = new ConsistentBalances(config.name(), ledger, accounts, config.retryPolicy());
        this.clock = Objects.requireNonNull(clock, "clock");
        this.listener = Objects.requireNonNull(listener, "listener");
    }

    /** The unique sequence index, the committer's and archiver's index, and the archive's. */
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

    // ---------------------------------------------------------------- helpers

    /** The value of {@link #SEQ_KEY} for {@code account}'s change at {@code seq}: the seqId's digits end at the colon. */
    static String seqKey(String account, long seq) {
        return seq + ":" + account;
    }

    /** A change as stored: its account, type, signed value and place in the account's log. */
    static Document change(String account, String type, long value, long seq) {
        return new Document(ACCOUNT, account).append(TYPE, type).append(VALUE, value).append(SEQ, seq)
                .append(SEQ_KEY, seqKey(account, seq));
    }

    /** The field of an archived copy's {@code _id} that holds the transaction's own id. */
    static final String ARCHIVED_ID = "tx";

    /**
     * The {@code _id} of {@code tx}'s archived copy: its id with the first change's account and seqId, which no other
     * transaction ever holds. An id may be used again once its transaction left the log (a new transaction), and the
     * archive keeps both; keyed by the id alone, the second archiving would overwrite the first, and the log would no
     * longer back the balances.
     */
    static Document archiveKey(Document tx) {
        Document first = tx.getList(CHANGES, Document.class).get(0);
        return new Document(ARCHIVED_ID, tx.get("_id")).append(ACCOUNT, first.getString(ACCOUNT))
                .append(SEQ, first.getLong(SEQ));
    }

    Document reread(Document tx) {
        return config.retryPolicy().execute(config.name(), tx.get("_id"), "read transaction", () -> byId(tx
                .get("_id")));
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
        Document archived = config.retryPolicy().execute(config.name(), id, "read archived transaction",
                () -> archive.find(eq("_id", archiveKey(tx))).first());
        if (archived == null) {
            // moved to fresh numbers after the version this call read: the latest copy archived under its id
            archived = config.retryPolicy().execute(config.name(), id, "read archived transaction",
                    () -> archive.find(eq("_id." + ARCHIVED_ID, id)).sort(Sorts.descending("ts")).first());
        }
        if (archived == null) {
            throw new ConsistencyException(config.name(), id, "transaction " + id + " is neither in the log nor in"
                    + " its archive: something outside this ledger deleted it");
        }
        return fromArchive(archived);
    }

    /** An archived copy as the log held it: under its transaction's own id. */
    static Document fromArchive(Document archived) {
        Document tx = new Document(archived);
        if (archived.get("_id") instanceof Document key) {
            tx.put("_id", key.get(ARCHIVED_ID));
        }
        return tx;
    }

    static long longOf(Document doc, String field) {
        return doc != null && doc.get(field) instanceof Number n ? n.longValue() : 0L;
    }

    static long checkpointSeq(Document cache) {
        return cache != null && cache.get(CHECKPOINT) instanceof Document cp ? longOf(cp, SEQ) : 0L;
    }

    void notify(Runnable call) {
        Listeners.call(config.name(), call);
    }

    Document byId(Object id) {
        return ledger.find(eq("_id", id)).first();
    }
}
