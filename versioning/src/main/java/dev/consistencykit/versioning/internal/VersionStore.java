package dev.consistencykit.versioning.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.lte;
import static dev.consistencykit.versioning.internal.VersionSchema.ABANDONED;
import static dev.consistencykit.versioning.internal.VersionSchema.AT;
import static dev.consistencykit.versioning.internal.VersionSchema.ATT;
import static dev.consistencykit.versioning.internal.VersionSchema.COMMITTED;
import static dev.consistencykit.versioning.internal.VersionSchema.COMMITTED_AT;
import static dev.consistencykit.versioning.internal.VersionSchema.CS;
import static dev.consistencykit.versioning.internal.VersionSchema.DELETED;
import static dev.consistencykit.versioning.internal.VersionSchema.FENCE;
import static dev.consistencykit.versioning.internal.VersionSchema.FLOOR;
import static dev.consistencykit.versioning.internal.VersionSchema.ITEM;
import static dev.consistencykit.versioning.internal.VersionSchema.LATE;
import static dev.consistencykit.versioning.internal.VersionSchema.META;
import static dev.consistencykit.versioning.internal.VersionSchema.PENDING;
import static dev.consistencykit.versioning.internal.VersionSchema.PENDING_AT;
import static dev.consistencykit.versioning.internal.VersionSchema.PENDING_COUNT;
import static dev.consistencykit.versioning.internal.VersionSchema.PRUNED;
import static dev.consistencykit.versioning.internal.VersionSchema.ROOT;
import static dev.consistencykit.versioning.internal.VersionSchema.UNSETTLED;
import static dev.consistencykit.versioning.internal.VersionSchema.UNSETTLED_AT;
import static dev.consistencykit.versioning.internal.VersionSchema.UNSETTLED_COUNT;
import static dev.consistencykit.versioning.internal.VersionSchema.UNTIL;
import static dev.consistencykit.versioning.internal.VersionSchema.V;
import static dev.consistencykit.versioning.internal.VersionSchema.VALUE;
import static dev.consistencykit.versioning.internal.VersionSchema.VERSION;
import static dev.consistencykit.versioning.internal.VersionSchema.normalize;

import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.bson.types.ObjectId;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.ErrorCategory;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;

import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.MongoErrors;
import dev.consistencykit.core.spi.PatternRegistry;
import dev.consistencykit.core.spi.PatternSetup;
import dev.consistencykit.core.spi.ReadSettings;
import dev.consistencykit.core.spi.RequiredIndexes;
import dev.consistencykit.core.spi.WriteConcerns;
import dev.consistencykit.versioning.UnknownRootException;
import dev.consistencykit.versioning.VersionedStoreConfig;

/**
 * The only owner of the versioned store's collections — roots, item versions, version records — offering its writes by
 * name (create a root, stage, write the item versions, commit, abandon, settle, prune) and the reads its parts make.
 * Each call is retried by the instance's retry policy where repeating it is safe; the conditions that make it safe
 * are the callers'.
 */
public final class VersionStore implements PatternSetup {

    private final VersionedStoreConfig config;
    private final String name;
    private final RetryPolicy retry;
    private final MongoDatabase database;
    private final MongoCollection<Document> roots;
    private final MongoCollection<Document> items;
    private final MongoCollection<Document> history;
    /** Where the collections may live on a sharded cluster, checked before the instance's first write. */
    private final RequiredIndexes placements;

    /** The collections of {@code config} in {@code database} (already checked for an acknowledged write concern). */
    public VersionStore(VersionedStoreConfig config, MongoDatabase database) {
        this.database = ReadSettings.ownReads(database);
        this.config = config;
        this.name = config.name();
        this.retry = config.retryPolicy();
        this.roots = this.database.getCollection(config.rootsCollection());
        this.items = this.database.getCollection(config.itemsCollection());
        this.history = this.database.getCollection(config.historyCollection());
        String unique = ", which stays unique across shards only where a shard key keeps the same _id on one shard";
        this.placements = new RequiredIndexes(name, this.database, List.of(), List.of(
                RequiredIndexes.Placement.byId(roots, "keeps one root per tree by _id" + unique),
                new RequiredIndexes.Placement(items, List.of("_id", ROOT), "keeps each item version once by its"
                        + " _id, which holds its root" + unique + " (a key led by _id or by root)"),
                new RequiredIndexes.Placement(history, List.of("_id", ROOT), "keeps one record of each version by"
                        + " its _id, which holds its root" + unique + " (a key led by _id or by root)")));
    }

    // ---------------------------------------------------------------- setup

    /**
     * Every index the store's queries use, then the instance's registration. None is unique: an item version and a
     * version record are each one by its {@code _id} ({@link VersionSchema#itemVersionId},
     * {@link VersionSchema#historyRecordId}), so the store's safety rests on no index but {@code _id}'s.
     */
    @Override
    public void ensureIndexes() {
        items.createIndex(Indexes.ascending(ROOT, ITEM, VERSION), new IndexOptions().name("root_item_version"));
        items.createIndex(Indexes.ascending(ROOT, VERSION), new IndexOptions().name("root_version"));
        items.createIndex(Indexes.ascending(COMMITTED, ROOT), new IndexOptions().name("committed_root"));
        roots.createIndex(Indexes.ascending(PENDING_COUNT), new IndexOptions().name("pendingCount"));
        history.createIndex(Indexes.ascending(ROOT, V), new IndexOptions().name("root_version"));
        history.createIndex(Indexes.ascending(ROOT, CS), new IndexOptions().name("root_cs"));
        placements.create();
        PatternRegistry.register(database, new PatternRegistry.Registration("versioning", config.name(),
                Map.of("roots", config.rootsCollection(), "items", config.itemsCollection(), "history",
                        config.historyCollection()), Map.of()));
    }

    /** How the collections are sharded, if that breaks what the store does. */
    @Override
    public List<String> setupProblems() {
        return placements.problems();
    }

    /** The codecs the application's database encodes with. */
    CodecRegistry codecs() {
        return roots.getCodecRegistry();
    }

    /** The roots collection's name. */
    String rootsName() {
        return roots.getNamespace().getCollectionName();
    }

    /** A root id checked and normalised (small integers become longs). */
    public Object rootId(Object rootId) {
        return normalize(Ids.documentId(name, "rootId", rootId, codecs()));
    }

    // ---------------------------------------------------------------- roots

    /** Inserts a new root; false if it existed (then it is confirmed as durable as the write concern asks). */
    boolean createRoot(Object id, Document root) {
        placements.verify();
        try {
            retry.run(name, id, "create root", () -> roots.insertOne(root));
            return true;
        } catch (MongoException e) {
            if (MongoErrors.isDuplicateKey(e)) {
                // it exists (made earlier, or by this call's own attempt whose acknowledgement was lost): make sure
                // it is as durable as the write concern asks before saying so
                retry.run(name, id, "confirm root", () -> WriteConcerns.confirm(roots, id, name, "create root"));
                return false;
            }
            throw e;
        }
    }

    /** An attempt staged by {@link #stage}: how many roots matched, and the attempt id the matching request sent. */
    record Staged(long matched, ObjectId att, Document root) {
    }

    /**
     * Stages a change set on its root: {@code update} of a fresh attempt id where {@code filter} matches, returning
     * the root's {@code fields} as they were. Every request, a retry too, sends a new attempt id (see the caller for
     * why); the result carries the last one sent.
     */
    Staged stage(Object operationId, Bson filter, Function<ObjectId, Bson> update, String... fields) {
        placements.verify();
        ObjectId[] sent = new ObjectId[1];
        Document before = retry.execute(name, operationId, "stage change set", () -> {
            sent[0] = new ObjectId();
            return roots.findOneAndUpdate(filter, update.apply(sent[0]), new FindOneAndUpdateOptions()
                    .projection(Projections.include(fields)));
        });
        return new Staged(before == null ? 0 : 1, sent[0], before);
    }

    /** The commit's compare-and-set on the root; whether it matched. */
    boolean commit(Object operationId, Bson filter, Bson update) {
        return retry.execute(name, operationId, "commit change set",
                () -> roots.updateOne(filter, update).getMatchedCount()) == 1;
    }

    /** Takes an attempt out of the root's pending set if it is still there (and counts it abandoned); matched. */
    long abandon(Object operationId, Object rootId, String slot, ObjectId att) {
        return retry.execute(name, operationId, "abandon change set", () -> roots.updateOne(
                and(eq("_id", rootId), eq(PENDING + "." + slot + "." + VersionSchema.ATT, att)),
                Updates.combine(Updates.unset(PENDING + "." + slot), Updates.unset(PENDING_AT + "." + slot),
                        Updates.inc(PENDING_COUNT, -1), Updates.inc(ABANDONED, 1L))).getMatchedCount());
    }

    /** Raises the root's floor to at least {@code floor}. */
    void raiseFloor(Object rootId, long floor) {
        retry.run(name, rootId, "raise floor", () -> roots.updateOne(eq("_id", rootId), Updates.max(FLOOR, floor)));
    }

    /**
     * Records that everything below {@code floor} is deleted ({@link VersionSchema#PRUNED}), unless a settler counted
     * late records since the pruner read {@code late} (then the next pass prunes again).
     */
    void markPruned(Object rootId, long floor, long late) {
        Bson unchanged = late == 0 ? exists(LATE, false) : eq(LATE, late);
        retry.run(name, rootId, "mark pruned", () -> roots.updateOne(and(eq("_id", rootId), unchanged),
                Updates.max(PRUNED, floor)));
    }

    /** Has the next prune pass delete below the floor again: records may have been written there. */
    void pruneAgain(Object rootId) {
        retry.run(name, rootId, "prune again", () -> roots.updateOne(eq("_id", rootId),
                Updates.combine(Updates.set(PRUNED, 0L), Updates.inc(LATE, 1L))));
    }

    /** Removes settled versions from their roots; how many roots changed. */
    long trimRoot(Object rootId, List<WriteModel<Document>> trims) {
        return retry.execute(name, rootId, "remove settled versions from the root",
                () -> roots.bulkWrite(trims, new BulkWriteOptions().ordered(false)).getModifiedCount());
    }

    /** The root, every field; throws {@link UnknownRootException} if there is none. */
    Document findRoot(Object id) {
        Document root = retry.execute(name, id, "read root", () -> roots.find(eq("_id", id)).first());
        if (root == null) {
            throw new UnknownRootException(name, id);
        }
        return root;
    }

    /** What one aggregation read of a tree returned: the root, the item versions, the floor after, a record. */
    record TreeRead(Document root, List<Document> items, long floorAfter, Document record) {
    }

    /**
     * One round trip: the root, then its item versions that may be visible at {@code version} (at the current version
     * when it is {@code null}; of item {@code item} alone when it is not {@code null}), then the root's floor again,
     * in that order on the server, and the history record of {@code version} (when given). {@code null} if there is
     * no such root. A tree too large for one reply comes in more batches of the same cursor.
     */
    TreeRead readTree(Object id, Long version, Object item) {
        return readTree(id, version, null, item);
    }

    /**
     * {@link #readTree(Object, Long, Object)} as of time {@code at} (server time of commits), whose version only the
     * root and the history tell: the history record of the newest settled version committed at or before
     * {@code at} (in {@code record}), then every item version that may be visible at any version from that one to
     * the root's, with its {@code until}; the caller places the version among them and the root's unsettled ones.
     */
    TreeRead readTreeAt(Object id, java.util.Date at) {
        return readTree(id, null, at, null);
    }

    private TreeRead readTree(Object id, Long version, java.util.Date at, Object item) {
        List<Bson> itemFilter = new ArrayList<>(List.of(eq(ROOT, id)));
        if (item != null) {
            itemFilter.add(eq(ITEM, item));
        }
        List<Bson> itemStages = new ArrayList<>();
        Document lookup = new Document("from", items.getNamespace().getCollectionName());
        if (at != null) {
            // from the newest settled version at or before the time (the floor when there is none) to the root's
            itemStages.add(Aggregates.match(and(itemFilter)));
            itemStages.add(Aggregates.match(Filters.expr(new Document("$and", List.of(
                    new Document("$lte", List.of("$" + VERSION, "$$v")),
                    new Document("$gt", List.of("$" + UNTIL, "$$from")))))));
            lookup.append("let", new Document("v", "$" + VERSION).append("from", new Document("$ifNull",
                    java.util.Arrays.asList(new Document("$arrayElemAt", List.of("$record." + V, 0)), "$" + FLOOR))));
        } else if (version == null) {
            // at the version of the root read just before, whatever is committed and settled after it: a settlement
            // after the root was read stamps "until" with a later version, so the version read decides
            itemStages.add(Aggregates.match(and(itemFilter)));
            itemStages.add(Aggregates.match(Filters.expr(new Document("$and", List.of(
                    new Document("$lte", List.of("$" + VERSION, "$$v")),
                    new Document("$gt", List.of("$" + UNTIL, "$$v")))))));
            lookup.append("let", new Document("v", "$" + VERSION));
        } else {
            // not replaced at or below the version, then at or below it: the real engine serves {root, until} from
            // its index and the version bound from those documents in a fifth of the time it takes to walk
            // {root, version} for a range (docs/peers.md); MongoDB merges the two stages
            itemFilter.add(gt(UNTIL, version));
            itemStages.add(Aggregates.match(and(itemFilter)));
            itemStages.add(Aggregates.match(Filters.expr(new Document("$lte", List.of("$" + VERSION, version)))));
        }
        List<String> itemFields = new ArrayList<>(List.of(ITEM, VERSION, ATT, COMMITTED, DELETED, VALUE));
        if (at != null) {
            itemFields.add(UNTIL);   // the caller places the version read among several
        }
        itemStages.add(Aggregates.project(Projections.fields(Projections.excludeId(), Projections.include(
                itemFields))));
        List<Bson> pipeline = new ArrayList<>();
        pipeline.add(Aggregates.match(eq("_id", id)));
        // what a read uses of the root, no more: each item version of the reply carries it
        List<String> rootFields = new ArrayList<>(List.of(VERSION, FLOOR, FENCE, UNSETTLED, UNSETTLED_COUNT, META,
                COMMITTED_AT, VersionSchema.SLOT));
        if (version != null || at != null) {
            rootFields.add(UNSETTLED_AT);   // the commit time of an unsettled version read as of
        }
        pipeline.add(Aggregates.project(Projections.include(rootFields)));
        if (at != null) {
            // the newest settled version committed by then
            pipeline.add(recordLookup(Aggregates.match(and(eq(ROOT, id), lte(AT, at))),
                    Aggregates.sort(new Document(V, -1)), Aggregates.limit(1)));
        } else if (version != null) {
            pipeline.add(recordLookup(Aggregates.match(and(eq(ROOT, id), eq(V, version)))));
        }
        pipeline.add(new Document("$lookup", lookup.append("pipeline", itemStages).append("as", "items")));
        pipeline.add(new Document("$unwind", new Document("path", "$items")
                .append("preserveNullAndEmptyArrays", true).append("includeArrayIndex", "i")));
        // the root's fields once, on the first item version, not repeated on every other (null there: the embedded
        // server has no $$REMOVE)
        Document once = new Document("items", 1).append("i", 1);
        if (version != null || at != null) {
            once.append("record", 1);
        }
        for (String field : rootFields) {
            once.append(field, new Document("$cond", java.util.Arrays.asList(new Document("$gt", List.of("$i", 0)),
                    null, "$" + field)));
        }
        pipeline.add(Aggregates.project(once));
        pipeline.add(new Document("$lookup", new Document("from", roots.getNamespace().getCollectionName())
                .append("pipeline", List.of(Aggregates.match(eq("_id", id)), Aggregates.project(
                        Projections.fields(Projections.excludeId(), Projections.include(FLOOR)))))
                .append("as", "again")));
        List<Document> out = retry.execute(name, id, "read tree",
                () -> roots.aggregate(pipeline).batchSize(READ_BATCH).into(new ArrayList<>()));
        if (out.isEmpty()) {
            return null;
        }
        List<Document> found = new ArrayList<>(out.size());
        long floorAfter = Long.MAX_VALUE;
        for (Document d : out) {
            if (d.get("items") instanceof Document itemVersion) {
                found.add(itemVersion);
            }
            // the floor read after the last item version: a version pruned meanwhile shows here
            floorAfter = d.getList("again", Document.class).stream().findFirst()
                    .map(again -> VersionSchema.number(again, FLOOR)).orElse(Long.MAX_VALUE);
        }
        // the one that carries the root's fields: the first item version's (index 0), or the only one of an empty tree
        Document first = out.stream().filter(d -> !(d.get("i") instanceof Number n) || n.longValue() == 0)
                .findFirst().orElseThrow();
        Document record = version == null && at == null ? null
                : first.getList("record", Document.class).stream().findFirst().orElse(null);
        return new TreeRead(first, found, floorAfter, record);
    }

    /** A {@code $lookup} of the history record {@code stages} select, as {@code record}: its number, meta and time. */
    private Document recordLookup(Bson... stages) {
        List<Bson> pipeline = new ArrayList<>(List.of(stages));
        pipeline.add(Aggregates.project(Projections.fields(Projections.excludeId(), Projections.include(V, META, AT,
                ATT))));
        return new Document("$lookup", new Document("from", history.getNamespace().getCollectionName())
                .append("pipeline", pipeline).append("as", "record"));
    }

    /** How many item versions a tree read asks for in its first reply (the server caps a reply at 16 MiB). */
    static final int READ_BATCH = 10_000;

    /**
     * A single command: the root and the history record of change set {@code changeSetId} (in {@code record}, empty
     * when it has none); {@code null} if there is no such root.
     */
    Document rootWithRecordOf(Object id, Object changeSetId) {
        List<Bson> pipeline = List.of(Aggregates.match(eq("_id", id)),
                new Document("$lookup", new Document("from", history.getNamespace().getCollectionName())
                        .append("pipeline", List.of(Aggregates.match(and(eq(ROOT, id), eq(CS, changeSetId))),
                                Aggregates.limit(1)))
                        .append("as", "record")));
        return retry.execute(name, changeSetId, "read root", () -> roots.aggregate(pipeline).first());
    }

    /**
     * Moves the root's fence on from {@code fence}, so that no direct commit made from a read before it can match;
     * whether it moved.
     */
    boolean moveFence(Object rootId, long fence, long version) {
        return retry.execute(name, rootId, "fence off direct commits", () -> roots.updateOne(
                and(eq("_id", rootId), VersionSchema.fenceIs(fence), eq(VERSION, version)),
                Updates.inc(VersionSchema.FENCE, 1L)).getMatchedCount()) == 1;
    }

    /** The root's {@code fields} as read for {@code what}; {@code null} if there is none. */
    Document root(Object id, String what, String... fields) {
        return retry.execute(name, id, what, () -> roots.find(eq("_id", id)).projection(Projections.include(fields))
                .first());
    }

    /** Roots with staged attempts, their pending entries only: at most {@code limit} (zero: all). */
    List<Document> rootsWithPending(int limit) {
        return roots.find(gt(PENDING_COUNT, 0)).projection(Projections.include(PENDING, PENDING_AT)).limit(limit)
                .into(new ArrayList<>());
    }

    /** Roots with staged attempts: version and pending entries. */
    List<Document> stagedRoots() {
        return retry.execute(name, null, "find staged change sets", () -> roots.find(gt(PENDING_COUNT, 0))
                .projection(Projections.include(VERSION, PENDING, PENDING_AT, COMMITTED_AT, VersionSchema.SLOT,
                        UNSETTLED_COUNT)).into(new ArrayList<>()));
    }

    /** Every root's version, floor and prune marks ({@link VersionSchema#PRUNED}, {@link VersionSchema#LATE}). */
    List<Document> rootVersions() {
        return retry.execute(name, null, "list roots", () -> roots.find(gte(VERSION, 0L))
                .projection(Projections.include(VERSION, FLOOR, PRUNED, LATE)).into(new ArrayList<>()));
    }

    /** The sums over every root of its committed versions ({@code c}), abandoned ({@code a}), staged ({@code p}). */
    Document sumRootCounters() {
        return retry.execute(name, null, "sum root counters", () -> roots.aggregate(List.of(
                Aggregates.group(null, Accumulators.sum("c", "$" + VERSION), Accumulators.sum("a", "$" + ABANDONED),
                        Accumulators.sum("p", "$" + PENDING_COUNT)))).first());
    }

    // ---------------------------------------------------------------- item versions

    /** Inserts an attempt's item versions; documents already written (a retry's) are fine. */
    void insertItemVersions(Object operationId, List<Document> docs) {
        placements.verify();
        try {
            retry.run(name, operationId, "write item versions",
                    () -> items.insertMany(docs, new InsertManyOptions().ordered(false)));
        } catch (MongoBulkWriteException e) {
            throwUnlessDuplicates(e);
        }
    }

    /** Deletes the uncommitted item versions of one attempt; how many. */
    long deleteAttemptItems(Object rootId, long version, ObjectId att) {
        return retry.execute(name, rootId, "delete abandoned item versions", () -> items.deleteMany(
                and(eq(ROOT, rootId), eq(VERSION, version), eq(ATT, att), eq(COMMITTED, false))).getDeletedCount());
    }

    /** Marks settled item versions committed and stamps what they replaced. */
    void markSettled(Object rootId, List<WriteModel<Document>> marks) {
        retry.run(name, rootId, "mark settled item versions",
                () -> items.bulkWrite(marks, new BulkWriteOptions().ordered(false)));
    }

    /**
     * Deletes the root's item versions replaced at or below {@code floor} and its committed tombstones there; how
     * many.
     */
    long deleteBelowFloor(Object rootId, long floor) {
        long deleted = retry.execute(name, rootId, "delete replaced item versions", () -> items.deleteMany(
                and(eq(ROOT, rootId), lte(VERSION, floor), lte(UNTIL, floor))).getDeletedCount());
        deleted += retry.execute(name, rootId, "delete old tombstones", () -> items.deleteMany(
                and(eq(ROOT, rootId), lte(VERSION, floor), eq(DELETED, true), eq(COMMITTED, true)))
                .getDeletedCount());
        return deleted;
    }

    /** How many item versions one attempt wrote. */
    long countAttemptItems(Object operationId, Object rootId, long version, ObjectId att) {
        return retry.execute(name, operationId, "count item versions", () -> items.countDocuments(
                and(eq(ROOT, rootId), eq(VERSION, version), eq(ATT, att))));
    }

    /** The item versions not yet marked committed, with {@code fields}, read whole for {@code what}. */
    List<Document> uncommittedItems(String what, String... fields) {
        return retry.execute(name, null, what, () -> items.find(eq(COMMITTED, false))
                .projection(Projections.include(fields)).into(new ArrayList<>()));
    }

    /** The item versions of the root's {@code versions}: item, version and attempt. */
    List<Document> itemsOfVersions(Object rootId, List<Long> versions) {
        return retry.execute(name, rootId, "read settled item ids", () -> items
                .find(and(eq(ROOT, rootId), in(VERSION, versions)))
                .projection(Projections.include(ITEM, VERSION, ATT)).into(new ArrayList<>()));
    }


    /** The versions of one item up to {@code version}, oldest first. */
    Iterable<Document> itemVersionsOldestFirst(Object rootId, Object item, long version) {
        return items.find(and(eq(ROOT, rootId), eq(ITEM, item), lte(VERSION, version))).sort(Sorts.ascending(VERSION));
    }


    // ---------------------------------------------------------------- version records

    /** Records settled versions (upserts; a record already there is fine). */
    void recordVersions(Object rootId, List<WriteModel<Document>> records) {
        try {
            retry.run(name, rootId, "record settled versions",
                    () -> history.bulkWrite(records, new BulkWriteOptions().ordered(false)));
        } catch (MongoBulkWriteException e) {
            throwUnlessDuplicates(e);
        }
    }

    /** Deletes the root's version records below {@code floor}. */
    void deleteRecordsBelow(Object rootId, long floor) {
        retry.run(name, rootId, "delete old version records",
                () -> history.deleteMany(and(eq(ROOT, rootId), lt(V, floor))));
    }

    /** The record of change set {@code changeSetId} on the root; {@code null} if it has none. */
    Document recordOfChangeSet(Object rootId, Object changeSetId) {
        return retry.execute(name, changeSetId, "look up change set",
                () -> history.find(and(eq(ROOT, rootId), eq(CS, changeSetId))).first());
    }

    /** The record of the root's {@code version}, read for {@code what}; {@code null} if it has none. */
    Document recordOfVersion(Object operationId, Object rootId, long version, String what) {
        return retry.execute(name, operationId, what, () -> history.find(and(eq(ROOT, rootId), eq(V, version)))
                .first());
    }

    /** The root's version records from {@code floor} on, oldest first. */
    Iterable<Document> recordsFrom(Object rootId, long floor) {
        return history.find(and(eq(ROOT, rootId), gte(V, floor))).sort(Sorts.ascending(V));
    }

    /** The root's oldest version record stamped at or after {@code cutoff}; {@code null} if none. */
    Document oldestRecordSince(Object rootId, Date cutoff) {
        return retry.execute(name, rootId, "find oldest kept version", () -> history
                .find(and(eq(ROOT, rootId), gte(AT, cutoff))).sort(Sorts.ascending(V)).limit(1).first());
    }

    private static void throwUnlessDuplicates(MongoBulkWriteException e) {
        for (BulkWriteError error : e.getWriteErrors()) {
            if (error.getCategory() != ErrorCategory.DUPLICATE_KEY) {
                throw e;
            }
        }
    }
}
