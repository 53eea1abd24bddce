package dev.consistencykit.testkit.contract;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.elemMatch;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.ne;
import static com.mongodb.client.model.Updates.addToSet;
import static com.mongodb.client.model.Updates.combine;
import static com.mongodb.client.model.Updates.currentDate;
import static com.mongodb.client.model.Updates.inc;
import static com.mongodb.client.model.Updates.pull;
import static com.mongodb.client.model.Updates.push;
import static com.mongodb.client.model.Updates.set;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.ToLongFunction;

import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.MongoWriteException;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import com.mongodb.client.result.UpdateResult;

import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.ConditionalUpdates;
import dev.consistencykit.core.spi.MongoErrors;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.Sharding;

/**
 * The behaviours of MongoDB that the patterns rely on, each a named {@link ContractCheck} that runs against any
 * server: the embedded one in CI, a real one by URI ({@code consistency-kit verify-server}).
 *
 * <pre>{@code
 * List<CheckResult> results = ServerContract.runAll(client);
 * results.forEach(r -> log.info("{}", r));   // PASS conditional-update-atomicity: ...
 * }</pre>
 *
 * <p>Each check runs in a scratch database of its own, dropped afterwards. The concurrency checks use 16 threads.
 */
public final class ServerContract {

    /** Threads used by the concurrency checks. */
    public static final int THREADS = 16;

    private static final Duration CHECK_TIMEOUT = Duration.ofSeconds(60);

    private ServerContract() {
    }

    /** Every check, in a stable order. */
    public static List<ContractCheck> checks() {
        return List.of(
                new ContractCheck("conditional-update-atomicity",
                        "a guarded $inc ({balance: {$gte: 1}}) raced by 16 threads never goes below 0 and stops at 0",
                        ServerContract::conditionalUpdateAtomicity),
                new ContractCheck("claim-exactly-once",
                        "findOneAndUpdate claims raced by 16 threads hand out every document exactly once",
                        ServerContract::claimExactlyOnce),
                new ContractCheck("single-document-read-atomicity",
                        "no read (find, findOneAndUpdate AFTER, aggregate) sees a document half-way through an update",
                        ServerContract::singleDocumentReadAtomicity),
                new ContractCheck("unique-index-duplicate-key",
                        "a unique index refuses a duplicate with code 11000, classified as DUPLICATE_KEY",
                        ServerContract::uniqueIndexDuplicateKey),
                new ContractCheck("unique-multikey-index",
                        "a unique index on a field of array elements refuses a key another document holds, allows it"
                                + " twice in one",
                        ServerContract::uniqueMultikeyIndex),
                new ContractCheck("scan-by-id-each-document-once",
                        "a scan over several batches sorted by _id returns every document once, after updates moved"
                                + " them (the library sorts what it sums or counts)",
                        ServerContract::scanByIdEachDocumentOnce),
                new ContractCheck("find-one-and-update-sort-return-document",
                        "findOneAndUpdate picks the first document in sort order and returns the BEFORE or AFTER image",
                        ServerContract::findOneAndUpdateSortReturnDocument),
                new ContractCheck("find-one-and-update-upsert",
                        "findOneAndUpdate with upsert inserts when nothing matches and returns the new document",
                        ServerContract::findOneAndUpdateUpsert),
                new ContractCheck("ne-push-apply-once",
                        "an update guarded by {marker: {$ne: t}} that pushes t applies once, however often it is sent",
                        ServerContract::nePushApplyOnce),
                new ContractCheck("pull-settle-once",
                        "an update guarded by {marker: t} that pulls t settles once",
                        ServerContract::pullSettleOnce),
                new ContractCheck("add-to-set",
                        "$addToSet adds an element once",
                        ServerContract::addToSetOnce),
                new ContractCheck("current-date-server-time",
                        "$currentDate stamps the server's time, close to isMaster's localTime",
                        ServerContract::currentDateServerTime),
                new ContractCheck("server-time",
                        "the server reports its localTime, so staleness can be judged by server time",
                        ServerContract::serverTime),
                new ContractCheck("elem-match-projection",
                        "an $elemMatch projection returns the matching array element, not the first",
                        ServerContract::elemMatchProjection),
                new ContractCheck("aggregation-shapes",
                        "aggregation $match/$unwind/$group/$sort/$limit computes per-key sums",
                        ServerContract::aggregationShapes),
                new ContractCheck("unordered-bulk-write",
                        "an unordered bulkWrite applies every valid request and reports counts and the failed one",
                        ServerContract::unorderedBulkWrite),
                new ContractCheck("id-guarded-update",
                        "an update filtered by _id plus a guard changes only that document, only when the guard holds",
                        ServerContract::idGuardedUpdate),
                new ContractCheck("delete-racing-an-update",
                        "the library's delete of one document by _id, raced by an update that leaves it matching,"
                                + " deletes it every time (sharded on {_id: \"hashed\"} where a collection can be)",
                        ServerContract::deleteRacingAnUpdate),
                new ContractCheck("unique-index-across-shards",
                        "a unique index on a sharded collection refuses a second document with its key on any shard,"
                                + " or cannot be created (MongoDB refuses one not led by the shard key); run where a"
                                + " collection can be sharded (a mongos, or a shard command: Sharding)",
                        ServerContract::uniqueIndexAcrossShards));
    }

    /** The client of the check running in this thread, for the checks that ask more of it than a database. */
    private static final ThreadLocal<MongoClient> CLIENT = new ThreadLocal<>();

    /** A check that cannot run on this server, and why. */
    private static final class NotApplicable extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NotApplicable(String why) {
            super(why, null, false, false);
        }
    }

    /** Runs every check against {@code client}, each in its own scratch database. */
    public static List<CheckResult> runAll(MongoClient client) {
        return runAll(client, r -> { });
    }

    /** {@link #runAll(MongoClient)}, reporting each result to {@code progress} as it ends. */
    public static List<CheckResult> runAll(MongoClient client, Consumer<CheckResult> progress) {
        List<CheckResult> results = new ArrayList<>();
        for (ContractCheck check : checks()) {
            CheckResult result = run(client, check);
            progress.accept(result);
            results.add(result);
        }
        return results;
    }

    /** Runs one check in a scratch database of its own. */
    public static CheckResult run(MongoClient client, ContractCheck check) {
        Objects.requireNonNull(check, "check");
        MongoDatabase scratch = client.getDatabase(MongoTarget.freshDatabaseName("contract"));
        long start = System.nanoTime();
        CLIENT.set(client);
        try {
            String seen = check.body().run(scratch);
            return new CheckResult(check.name(), true, seen, Duration.ofNanos(System.nanoTime() - start));
        } catch (NotApplicable e) {
            return new CheckResult(check.name(), true, "not checked: " + e.getMessage(),
                    Duration.ofNanos(System.nanoTime() - start), true);
        } catch (ContractViolation e) {
            return new CheckResult(check.name(), false, e.getMessage(), Duration.ofNanos(System.nanoTime() - start));
        } catch (MongoException e) {
            return new CheckResult(check.name(), false, "server error: " + e.getClass().getSimpleName() + ": "
                    + e.getMessage(), Duration.ofNanos(System.nanoTime() - start));
        } finally {
            CLIENT.remove();
            MongoTarget.drop(scratch);
        }
    }

    // ---- the checks -------------------------------------------------------------------------------------------

    /**
     * A collection sharded on {@code {_id: "hashed"}}, a unique index on another field, and sixteen documents with
     * sixteen ids (spread over the shards by the hash) and one key: a server that keeps the index unique stores one.
     */
    static String uniqueIndexAcrossShards(MongoDatabase db) {
        Sharding sharding = Sharding.of(CLIENT.get());
        sharding.unavailable().ifPresent(why -> {
            throw new NotApplicable(why);
        });
        sharding.shard(db, "sharded", new Document("_id", "hashed"));
        MongoCollection<Document> c = db.getCollection("sharded");
        try {
            c.createIndex(new Document("k", 1), new IndexOptions().unique(true));
        } catch (MongoException e) {
            if (MongoErrors.isTransient(e)) {
                throw e;
            }
            return "refused a unique index not led by the shard key (" + e.getCode() + ")";
        }
        int stored = 0;
        for (int i = 0; i < 16; i++) {
            try {
                c.insertOne(new Document("_id", i).append("k", "same"));
                stored++;
            } catch (MongoException e) {
                if (!MongoErrors.isDuplicateKey(e)) {
                    throw e;
                }
            }
        }
        ContractViolation.require(stored == 1, "a unique index {k: 1} on a collection sharded on {_id: \"hashed\"} let "
                + stored + " documents with different ids share one key: the server keeps it unique only among"
                + " documents with the same shard-key value, so a pattern's unique index on a sharded collection (the"
                + " ledger's sequence numbers, the job queue's dedupe keys) would not hold there");
        return "refused 15 of 16 documents sharing one key on a collection sharded on {_id: \"hashed\"}";
    }

    /** Races of a delete and an update of one document, per kind of delete. */
    static final int DELETE_RACES = 200;

    /**
     * {@value #DELETE_RACES} documents, each raced by an update ({@code $currentDate}) and the library's delete
     * ({@link ConditionalUpdates#delete}) guarded by a field the update leaves as it is: every one is deleted, and
     * every delete says so. The same races with the driver's {@code deleteOne} are counted, not required: the real
     * engine loses some (its delete goes to the row's address before the update, docs/servers.md), which is why the
     * library never sends one.
     */
    static String deleteRacingAnUpdate(MongoDatabase db) {
        Sharding sharding = Sharding.of(CLIENT.get());
        boolean sharded = sharding.unavailable().isEmpty();
        if (sharded) {
            sharding.shard(db, "races", new Document("_id", "hashed"));
        }
        MongoCollection<Document> c = db.getCollection("races");
        int libraryLost = races(c, "library", id -> ConditionalUpdates.delete(c, id, eq("line", List.of())));
        int deleteOneLost = races(c, "deleteOne", id -> c.deleteOne(and(eq("_id", id), eq("line", List.of())))
                .getDeletedCount());
        long left = c.countDocuments(eq("kind", "library"));
        ContractViolation.require(libraryLost == 0 && left == 0, "the library's delete of one document by _id"
                + " reported nothing deleted in " + libraryLost + " of " + DELETE_RACES + " races with an update that"
                + " left it matching, and " + left + " such documents are still there: evidence a pattern deletes"
                + " (an emptied line, an archived entry) would stay behind");
        return "the library's delete deleted all " + DELETE_RACES + " raced documents" + (sharded ? " (sharded)" : "")
                + "; the driver's deleteOne deleted nothing in " + deleteOneLost + " of " + DELETE_RACES;
    }

    /** Races {@code delete} with an update of each of {@value #DELETE_RACES} new documents; the deletes that lost. */
    private static int races(MongoCollection<Document> c, String kind,
                             ToLongFunction<Object> delete) {
        AtomicInteger lost = new AtomicInteger();
        for (int i = 0; i < DELETE_RACES; i++) {
            String id = kind + "-" + i;
            c.insertOne(new Document("_id", id).append("kind", kind).append("line", List.of()));
            concurrently(2, t -> () -> {
                if (t == 0) {
                    c.updateOne(eq("_id", id), currentDate("movedAt"));
                } else if (delete.applyAsLong(id) == 0) {
                    lost.incrementAndGet();
                }
                return null;
            });
        }
        return lost.get();
    }

    static String conditionalUpdateAtomicity(MongoDatabase db) {
        MongoCollection<Document> c = db.getCollection("accounts");
        int start = 2_000;
        c.insertOne(new Document("_id", "a").append("balance", start));
        AtomicLong debits = new AtomicLong();
        concurrently(THREADS, i -> () -> {
            while (true) {
                UpdateResult r = c.updateOne(and(eq("_id", "a"), gte("balance", 1)), inc("balance", -1));
                if (r.getModifiedCount() == 0) {
                    return null;
                }
                debits.incrementAndGet();
            }
        });
        int balance = c.find(eq("_id", "a")).first().getInteger("balance");
        ContractViolation.require(balance == 0 && debits.get() == start,
                "balance " + balance + " after " + debits.get() + " successful debits of " + start);
        return debits.get() + " guarded debits by " + THREADS + " threads, balance stopped at exactly 0";
    }

    static String claimExactlyOnce(MongoDatabase db) {
        MongoCollection<Document> c = db.getCollection("jobs");
        int jobs = 500;
        List<Document> docs = new ArrayList<>();
        for (int i = 0; i < jobs; i++) {
            docs.add(new Document("_id", i).append("state", "TODO"));
        }
        c.insertMany(docs);
        Set<Object> claimed = ConcurrentHashMap.newKeySet();
        AtomicInteger duplicates = new AtomicInteger();
        concurrently(THREADS, t -> () -> {
            while (true) {
                Document job = c.findOneAndUpdate(eq("state", "TODO"),
                        combine(set("state", "DOING"), set("owner", t)),
                        new FindOneAndUpdateOptions().sort(Sorts.ascending("_id"))
                                .returnDocument(ReturnDocument.AFTER));
                if (job == null) {
                    return null;
                }
                if (!claimed.add(job.get("_id"))) {
                    duplicates.incrementAndGet();
                }
            }
        });
        long left = c.countDocuments(eq("state", "TODO"));
        ContractViolation.require(claimed.size() == jobs && duplicates.get() == 0 && left == 0,
                claimed.size() + " of " + jobs + " claimed, " + duplicates.get() + " claimed twice, " + left + " left");
        return jobs + " jobs claimed by " + THREADS + " threads, each exactly once";
    }

    static String singleDocumentReadAtomicity(MongoDatabase db) {
        return singleDocumentReadAtomicity(db, READ_ATOMICITY_DURATION);
    }

    /** How long the read-atomicity check hammers one document. */
    static final Duration READ_ATOMICITY_DURATION = Duration.ofMillis(1_500);

    /**
     * Writers increment 16 counters of one document in one update; readers check that all 16 are equal. The
     * counters are interleaved with padding so that serialising the document takes long enough for an in-place
     * update to overtake it, which is how a server that hands out live documents tears them. Stops at the first
     * torn read or after {@code duration}.
     */
    static String singleDocumentReadAtomicity(MongoDatabase db, Duration duration) {
        MongoCollection<Document> c = db.getCollection("pairs");
        int fields = 16;
        Document initial = new Document("_id", 1);
        for (int f = 0; f < fields; f++) {
            initial.append("f" + f, 0).append("pad" + f, "x".repeat(4_000));
        }
        c.insertOne(initial);
        List<Bson> incs = new ArrayList<>();
        for (int f = 0; f < fields; f++) {
            incs.add(inc("f" + f, 1));
        }
        Bson update = combine(incs);
        AtomicLong reads = new AtomicLong();
        AtomicLong torn = new AtomicLong();
        List<String> examples = new CopyOnWriteArrayList<>();
        long deadline = System.nanoTime() + duration.toNanos();
        int writers = THREADS / 2;
        concurrently(THREADS, t -> () -> {
            if (t < writers) {
                int i = 0;
                while (System.nanoTime() < deadline && torn.get() == 0) {
                    if (t % 2 == 0) {
                        Document after = c.findOneAndUpdate(eq("_id", 1), update,
                                new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER));
                        check(after, fields, "findOneAndUpdate AFTER", reads, torn, examples);
                    } else {
                        c.updateOne(eq("_id", 1), update);
                    }
                    i++;
                }
                return i;
            }
            while (System.nanoTime() < deadline && torn.get() == 0) {
                if (t % 3 == 0) {
                    for (Document d : c.aggregate(List.of(Aggregates.match(eq("_id", 1))))) {
                        check(d, fields, "aggregate", reads, torn, examples);
                    }
                } else {
                    check(c.find(eq("_id", 1)).first(), fields, "find", reads, torn, examples);
                }
            }
            return null;
        });
        ContractViolation.require(torn.get() == 0, torn.get() + " torn reads in " + reads.get() + " reads, e.g. "
                + examples.subList(0, Math.min(3, examples.size())));
        return reads.get() + " reads of a document whose 16 counters " + writers
                + " concurrent writers increment together: none torn";
    }

    private static void check(Document d, int fields, String how, AtomicLong reads, AtomicLong torn,
                              List<String> examples) {
        reads.incrementAndGet();
        int first = d.getInteger("f0");
        for (int f = 1; f < fields; f++) {
            int value = d.getInteger("f" + f);
            if (value != first) {
                torn.incrementAndGet();
                if (examples.size() < 3) {
                    examples.add(how + ": f0=" + first + " f" + f + "=" + value);
                }
                return;
            }
        }
    }

    static String uniqueIndexDuplicateKey(MongoDatabase db) {
        MongoCollection<Document> c = db.getCollection("unique");
        c.createIndex(Indexes.ascending("k"), new IndexOptions().unique(true));
        c.insertOne(new Document("_id", 1).append("k", "x"));
        try {
            c.insertOne(new Document("_id", 2).append("k", "x"));
        } catch (MongoWriteException e) {
            ContractViolation.require(e.getCode() == 11000 && e.getError().getCategory() == ErrorCategory.DUPLICATE_KEY
                    && MongoErrors.isDuplicateKey(e), "refused with code " + e.getCode() + ", category "
                    + e.getError().getCategory());
            return "second insert refused with code 11000, DUPLICATE_KEY";
        }
        throw new ContractViolation("a duplicate key was accepted");
    }

    static String uniqueMultikeyIndex(MongoDatabase db) {
        MongoCollection<Document> c = db.getCollection("tx");
        c.createIndex(Indexes.ascending("changes.k"), new IndexOptions().unique(true));
        c.insertOne(new Document("_id", 1).append("changes", List.of(keyed("1:a"), keyed("1:b"))));
        boolean refused = false;
        try {
            c.insertOne(new Document("_id", 2).append("changes", List.of(keyed("1:c"), keyed("1:a"))));
        } catch (MongoWriteException e) {
            refused = e.getError().getCategory() == ErrorCategory.DUPLICATE_KEY;
        }
        ContractViolation.require(refused, "a document repeating the key 1:a held by another was accepted");
        c.insertOne(new Document("_id", 3).append("changes", List.of(keyed("2:a"), keyed("2:b"))));
        c.insertOne(new Document("_id", 4).append("changes", List.of(keyed("1:d"), keyed("1:d"))));
        long count = c.countDocuments();
        ContractViolation.require(count == 3, count + " documents, expected 3");
        return "key held by another document refused (11000); new keys and a key twice in one document accepted"
                + compoundMultikeyDifference(db.getCollection("compound"));
    }

    /**
     * What a unique index over two fields of one array does on this server, said rather than required: MongoDB makes
     * one key per element ({@code (a, 5)}, {@code (b, 7)}); DocumentDB makes one per combination of the elements'
     * values ({@code (a, 7)}, {@code (b, 5)} too), so it refuses documents MongoDB accepts. No pattern rests on such
     * an index; an application's own would behave differently there.
     */
    static String compoundMultikeyDifference(MongoCollection<Document> c) {
        c.createIndex(Indexes.ascending("changes.account", "changes.seqId"), new IndexOptions().unique(true));
        c.insertOne(new Document("_id", 1).append("changes", List.of(change("a", 5), change("b", 7))));
        try {
            c.insertOne(new Document("_id", 2).append("changes", List.of(change("a", 6), change("c", 5))));
            return "";
        } catch (MongoWriteException e) {
            return "; note: a unique index over two fields of one array keys every combination of the elements'"
                    + " values here, unlike MongoDB (it refused {changes: [{account: a, seqId: 6}, {account: c,"
                    + " seqId: 5}]} beside {changes: [{account: a, seqId: 5}, {account: b, seqId: 7}]}); no pattern"
                    + " relies on such an index";
        }
    }

    /**
     * 300 documents, each updated three times, read back over batches of 101: sorted by {@code _id}, each must come
     * once. The unsorted scan is said rather than required: DocumentDB behind FerretDB 2.5 returned some documents
     * twice across batches (307 of 300 here), so the library never sums or counts an unsorted multi-batch scan.
     */
    static String scanByIdEachDocumentOnce(MongoDatabase db) {
        MongoCollection<Document> c = db.getCollection("scan");
        List<Document> docs = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            docs.add(new Document("_id", i).append("pad", "x".repeat(200)).append("n", 0));
        }
        c.insertMany(docs);
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 300; i++) {
                c.updateOne(eq("_id", i), combine(inc("n", 1), push("h", round)));
            }
        }
        List<Object> sorted = new ArrayList<>();
        c.find().sort(Sorts.ascending("_id")).batchSize(101).forEach(d -> sorted.add(d.get("_id")));
        ContractViolation.require(sorted.size() == 300 && new HashSet<>(sorted).size() == 300,
                "sorted by _id: " + sorted.size() + " documents returned, " + new HashSet<>(sorted).size()
                        + " distinct, of 300");
        List<Object> unsorted = new ArrayList<>();
        c.find().batchSize(101).forEach(d -> unsorted.add(d.get("_id")));
        String note = unsorted.size() == 300 && new HashSet<>(unsorted).size() == 300 ? ""
                : "; note: unsorted, the same scan returned " + unsorted.size() + " documents, "
                + new HashSet<>(unsorted).size() + " distinct: an unsorted scan of several batches is not exact here";
        return "300 documents, each once, sorted by _id over batches of 101" + note;
    }

    private static Document change(String account, int seqId) {
        return new Document("account", account).append("seqId", seqId);
    }

    private static Document keyed(String key) {
        return new Document("k", key);
    }

    static String findOneAndUpdateSortReturnDocument(MongoDatabase db) {
        MongoCollection<Document> c = db.getCollection("queue");
        c.insertMany(List.of(new Document("_id", 1).append("p", 1).append("v", 0),
                new Document("_id", 2).append("p", 5).append("v", 0),
                new Document("_id", 3).append("p", 3).append("v", 0)));
        Document before = c.findOneAndUpdate(new Document(), inc("v", 1),
                new FindOneAndUpdateOptions().sort(Sorts.descending("p")).returnDocument(ReturnDocument.BEFORE));
        Document after = c.findOneAndUpdate(ne("_id", 2), inc("v", 1),
                new FindOneAndUpdateOptions().sort(Sorts.descending("p")).returnDocument(ReturnDocument.AFTER));
        ContractViolation.require(before != null && before.getInteger("_id") == 2 && before.getInteger("v") == 0,
                "BEFORE returned " + before);
        ContractViolation.require(after != null && after.getInteger("_id") == 3 && after.getInteger("v") == 1,
                "AFTER returned " + after);
        return "sorted pick returned the pre-image with BEFORE and the post-image with AFTER";
    }

    static String findOneAndUpdateUpsert(MongoDatabase db) {
        MongoCollection<Document> c = db.getCollection("upsert");
        Document before = c.findOneAndUpdate(eq("_id", "k"), set("v", 1),
                new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.BEFORE));
        Document after = c.findOneAndUpdate(eq("_id", "m"), set("v", 2),
                new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.AFTER));
        ContractViolation.require(before == null, "upsert with BEFORE returned " + before);
        ContractViolation.require(after != null && "m".equals(after.get("_id")) && after.getInteger("v") == 2,
                "upsert with AFTER returned " + after);
        ContractViolation.require(c.countDocuments() == 2, c.countDocuments() + " documents after two upserts");
        return "upserts inserted; BEFORE returned null, AFTER the new document";
    }

    static String nePushApplyOnce(MongoDatabase db) {
        MongoCollection<Document> c = db.getCollection("accounts");
        c.insertOne(new Document("_id", "a").append("balance", 100).append("pending", List.of()));
        Bson guard = and(eq("_id", "a"), ne("pending", "t1"));
        Bson apply = combine(inc("balance", -30), push("pending", "t1"));
        long first = c.updateOne(guard, apply).getModifiedCount();
        long second = c.updateOne(guard, apply).getModifiedCount();
        Document d = c.find(eq("_id", "a")).first();
        ContractViolation.require(first == 1 && second == 0 && d.getInteger("balance") == 70
                && d.getList("pending", String.class).equals(List.of("t1")),
                "modified " + first + " then " + second + ", document " + d.toJson());
        return "applied once (balance 100 -> 70), the repeat matched nothing";
    }

    static String pullSettleOnce(MongoDatabase db) {
        MongoCollection<Document> c = db.getCollection("accounts");
        c.insertOne(new Document("_id", "a").append("balance", 70).append("pending", List.of("t1", "t2")));
        Bson guard = and(eq("_id", "a"), eq("pending", "t1"));
        Bson settle = combine(inc("balance", 5), pull("pending", "t1"));
        long first = c.updateOne(guard, settle).getModifiedCount();
        long second = c.updateOne(guard, settle).getModifiedCount();
        Document d = c.find(eq("_id", "a")).first();
        ContractViolation.require(first == 1 && second == 0 && d.getInteger("balance") == 75
                && d.getList("pending", String.class).equals(List.of("t2")),
                "modified " + first + " then " + second + ", document " + d.toJson());
        return "settled once, the other marker kept";
    }

    static String addToSetOnce(MongoDatabase db) {
        MongoCollection<Document> c = db.getCollection("users");
        c.insertOne(new Document("_id", "a").append("friends", List.of()));
        c.updateOne(eq("_id", "a"), addToSet("friends", "b"));
        c.updateOne(eq("_id", "a"), addToSet("friends", "b"));
        List<String> friends = c.find(eq("_id", "a")).first().getList("friends", String.class);
        ContractViolation.require(friends.equals(List.of("b")), "friends " + friends);
        return "added once";
    }

    static String currentDateServerTime(MongoDatabase db) {
        MongoCollection<Document> c = db.getCollection("stamps");
        Date before = serverLocalTime(db);
        c.updateOne(eq("_id", 1), currentDate("lastModified"), new com.mongodb.client.model.UpdateOptions()
                .upsert(true));
        Date after = serverLocalTime(db);
        Date stamp = c.find(eq("_id", 1)).first().getDate("lastModified");
        ContractViolation.require(stamp != null, "no lastModified stamped");
        // Server clocks have millisecond resolution; allow one second either side for rounding and scheduling.
        boolean within = !stamp.before(new Date(before.getTime() - 1_000)) && !stamp.after(new Date(after.getTime()
                + 1_000));
        ContractViolation.require(within, "stamp " + stamp.toInstant() + " outside server time [" + before.toInstant()
                + ", " + after.toInstant() + "]");
        return "stamp " + stamp.toInstant() + " within server time [" + before.toInstant() + ", "
                + after.toInstant() + "]";
    }

    static String serverTime(MongoDatabase db) {
        Date local = serverLocalTime(db);
        ServerClock clock = ServerClock.of(db);
        Instant estimate = clock.now();
        Duration gap = Duration.between(local.toInstant(), estimate).abs();
        ContractViolation.require(gap.compareTo(Duration.ofSeconds(5)) < 0,
                "estimated server time " + estimate + " is " + gap + " from the reported " + local.toInstant());
        return "server localTime " + local.toInstant() + ", client offset " + clock.offset().toMillis() + " ms (±"
                + clock.uncertainty().toMillis() + " ms)";
    }

    private static Date serverLocalTime(MongoDatabase db) {
        Object t = db.runCommand(new Document("isMaster", 1)).get("localTime");
        if (!(t instanceof Date date)) {
            throw new ContractViolation("isMaster did not report localTime: " + t);
        }
        return date;
    }

    static String elemMatchProjection(MongoDatabase db) {
        MongoCollection<Document> c = db.getCollection("tx");
        c.insertOne(new Document("_id", 1).append("changes", List.of(change("a", 1), change("b", 7),
                change("c", 3))));
        Document d = c.find(eq("_id", 1))
                .projection(Projections.elemMatch("changes", eq("account", "b"))).first();
        List<Document> changes = d.getList("changes", Document.class);
        ContractViolation.require(changes.size() == 1 && "b".equals(changes.get(0).getString("account"))
                && changes.get(0).getInteger("seqId") == 7, "projection returned " + changes);
        Document byQuery = c.find(elemMatch("changes", and(eq("account", "c"), eq("seqId", 3)))).first();
        ContractViolation.require(byQuery != null, "$elemMatch query found nothing");
        return "projection returned only the matching element (b, 7); $elemMatch query matched";
    }

    static String aggregationShapes(MongoDatabase db) {
        MongoCollection<Document> c = db.getCollection("tx");
        c.insertMany(List.of(
                new Document("_id", 1).append("state", "VALID").append("changes", List.of(
                        new Document("account", "a").append("value", -5), new Document("account", "b").append("value", 5))),
                new Document("_id", 2).append("state", "VALID").append("changes", List.of(
                        new Document("account", "a").append("value", -2), new Document("account", "c").append("value", 2))),
                new Document("_id", 3).append("state", "CANCELLED").append("changes", List.of(
                        new Document("account", "a").append("value", -100)))));
        List<Document> sums = c.aggregate(List.of(
                Aggregates.match(eq("state", "VALID")),
                Aggregates.unwind("$changes"),
                Aggregates.match(in("changes.account", List.of("a", "b"))),
                Aggregates.group("$changes.account", Accumulators.sum("total", "$changes.value"),
                        Accumulators.sum("count", 1)),
                Aggregates.sort(Sorts.ascending("_id")),
                Aggregates.limit(10))).into(new ArrayList<>());
        ContractViolation.require(sums.size() == 2
                && "a".equals(sums.get(0).get("_id")) && ((Number) sums.get(0).get("total")).longValue() == -7
                && "b".equals(sums.get(1).get("_id")) && ((Number) sums.get(1).get("total")).longValue() == 5,
                "sums " + sums);
        return "per-account sums of VALID changes: a=-7, b=5";
    }

    static String unorderedBulkWrite(MongoDatabase db) {
        MongoCollection<Document> c = db.getCollection("bulk");
        c.insertMany(List.of(new Document("_id", 1).append("v", 0), new Document("_id", 2).append("v", 0)));
        List<WriteModel<Document>> requests = List.of(
                new InsertOneModel<>(new Document("_id", 1).append("v", 9)),
                new UpdateOneModel<>(eq("_id", 2), inc("v", 1)),
                new InsertOneModel<>(new Document("_id", 3).append("v", 0)),
                new DeleteOneModel<>(eq("_id", 3)));
        try {
            c.bulkWrite(requests, new BulkWriteOptions().ordered(false));
        } catch (MongoBulkWriteException e) {
            BulkWriteResult r = e.getWriteResult();
            ContractViolation.require(e.getWriteErrors().size() == 1 && e.getWriteErrors().get(0).getIndex() == 0
                    && MongoErrors.isDuplicateKey(e) && r.getInsertedCount() == 1 && r.getModifiedCount() == 1
                    && r.getDeletedCount() == 1, "errors " + e.getWriteErrors() + ", inserted " + r.getInsertedCount()
                    + ", modified " + r.getModifiedCount() + ", deleted " + r.getDeletedCount());
            return "the duplicate insert failed alone (index 0); 1 inserted, 1 modified, 1 deleted";
        }
        throw new ContractViolation("a duplicate insert in the bulk was accepted");
    }

    static String idGuardedUpdate(MongoDatabase db) {
        MongoCollection<Document> c = db.getCollection("tx");
        List<Document> docs = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            docs.add(new Document("_id", "t" + i).append("state", i % 2 == 0 ? "pending" : "done"));
        }
        c.insertMany(docs);
        long hit = c.updateOne(and(eq("_id", "t10"), eq("state", "pending")), set("state", "applied"))
                .getModifiedCount();
        long miss = c.updateOne(and(eq("_id", "t11"), eq("state", "pending")), set("state", "applied"))
                .getModifiedCount();
        long absent = c.updateOne(and(eq("_id", "nope"), eq("state", "pending")), set("state", "applied"))
                .getMatchedCount();
        Set<Object> applied = new HashSet<>();
        c.find(eq("state", "applied")).forEach(d -> applied.add(d.get("_id")));
        ContractViolation.require(hit == 1 && miss == 0 && absent == 0 && applied.equals(Set.of("t10")),
                "guarded updates modified " + hit + "/" + miss + "/" + absent + ", applied " + applied);
        Document viaIn = c.find(and(in("_id", List.of("t10", "t12")), eq("state", "applied"))).first();
        ContractViolation.require(viaIn != null && "t10".equals(viaIn.get("_id")), "$in on _id found " + viaIn);
        return "only the guarded document changed, only when its guard held";
    }

    // ---- helpers ----------------------------------------------------------------------------------------------

    /** A task factory by thread index. */
    @FunctionalInterface
    private interface TaskFactory {
        Callable<?> create(int thread);
    }

    private static void concurrently(int threads, TaskFactory factory) {
        ExecutorService executor = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Callable<?> task = factory.create(t);
                futures.add(executor.submit(() -> {
                    start.await();
                    return task.call();
                }));
            }
            start.countDown();
            for (Future<?> f : futures) {
                f.get(CHECK_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ContractViolation("interrupted");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            throw new ContractViolation("a thread failed: " + e.getCause());
        } catch (TimeoutException e) {
            throw new ContractViolation("threads did not finish within " + CHECK_TIMEOUT);
        } finally {
            executor.shutdownNow();
        }
    }
}
