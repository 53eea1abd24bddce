package dev.consistencykit.syncflag.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.elemMatch;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.ne;
import static com.mongodb.client.model.Filters.nor;
import static com.mongodb.client.model.Filters.not;
import static dev.consistencykit.syncflag.internal.SyncSchema.ELEMENT;
import static dev.consistencykit.syncflag.internal.SyncSchema.FLAG;
import static dev.consistencykit.syncflag.internal.SyncSchema.FLAG_AT;
import static dev.consistencykit.syncflag.internal.SyncSchema.FLAG_OP;
import static dev.consistencykit.syncflag.internal.SyncSchema.OPS;
import static dev.consistencykit.syncflag.internal.SyncSchema.VERSION;
import static dev.consistencykit.syncflag.internal.SyncSchema.valueAt;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.PushOptions;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.spi.PatternSetup;
import dev.consistencykit.core.spi.ReadSettings;
import dev.consistencykit.core.spi.RequiredIndexes;
import dev.consistencykit.syncflag.SyncFlagConfig;
import dev.consistencykit.syncflag.SyncTarget;

/**
 * The only owner of the sync flag's collections — the master, every target, the registry — offering its writes by
 * name: record an update on its master, raise a master's version, write the copies, take over a flag, clear it. Each
 * write is retried by the instance's retry policy where repeating it is safe (every one of them is guarded so that it
 * is).
 */
public final class SyncStore implements PatternSetup {

    /** The most registered instances read: one document each, so far more than any application has. */
    static final int MAX_REGISTERED = 1_000;

    private final SyncFlagConfig config;
    private final RetryPolicy retry;
    private final MongoCollection<Document> masters;
    private final MongoCollection<Document> registry;
    private final Map<SyncTarget, MongoCollection<Document>> targets = new LinkedHashMap<>();
    private final Bson masterProjection;
    /** Where the masters may live on a sharded cluster, checked before the instance's first write. */
    private final RequiredIndexes placements;

    /** The collections of {@code config} in {@code database} (already checked for an acknowledged write concern). */
    public SyncStore(SyncFlagConfig config, MongoDatabase database) {
        database = ReadSettings.ownReads(database);
        this.config = config;
        this.retry = config.retryPolicy();
        this.masters = database.getCollection(config.masterCollection());
        this.registry = database.getCollection(SyncFlagConfig.REGISTRY_COLLECTION);
        for (SyncTarget target : config.targets()) {
            targets.put(target, database.getCollection(target.collection()));
        }
        List<String> fields = new ArrayList<>(config.masterFields());
        fields.add(VERSION);
        fields.add(FLAG);
        this.masterProjection = Projections.include(fields);
        this.placements = new RequiredIndexes(config.name(), database, List.of(), List.of(
                RequiredIndexes.Placement.byId(masters, "records each update on its master with findOneAndUpdate by"
                        + " _id, which a collection sharded on another key refuses")));
    }

    CodecRegistry codecs() {
        return masters.getCodecRegistry();
    }

    List<SyncTarget> targets() {
        return List.copyOf(targets.keySet());
    }

    private <T> T retried(Object masterId, String what, Supplier<T> write) {
        return retry.execute(config.name(), masterId, what, write);
    }

    // ---------------------------------------------------------------- writes

    /**
     * Records an update on its master in one write, unless the master remembers {@code opId} already: applies
     * {@code update} (the user's operators, and with {@code flag} the version bump and the flag) and pushes the
     * update's id and fingerprint into the remembered window. Returns the master as the write left it, or
     * {@code null} when nothing matched (no such master, or the update was recorded before).
     */
    Document recordUpdate(Object masterId, Object opId, String fingerprint, Bson userUpdate, boolean flag) {
        placements.verify();
        List<Bson> parts = new ArrayList<>();
        if (userUpdate != null) {
            parts.add(userUpdate);
        }
        if (flag) {
            parts.add(Updates.inc(VERSION, 1L));
            parts.add(Updates.set(FLAG_OP, opId));
            parts.add(Updates.currentDate(FLAG_AT));
        }
        parts.add(Updates.pushEach(OPS, List.of(new Document("id", opId).append("h", fingerprint)),
                new PushOptions().slice(-config.rememberedUpdates())));
        Bson update = Updates.combine(parts);
        // the guard makes a retried or repeated update a no-op: the master remembers the ids it applied; and a
        // flagged update counts only a version that is a whole number (NaN, an infinity, a huge double or an array
        // would stay what it is under $inc, and every copy's version guard would then refuse every write)
        Bson filter = flag ? and(eq("_id", masterId), ne(OPS + ".id", opId), SyncSchema.countableVersion())
                : and(eq("_id", masterId), ne(OPS + ".id", opId));
        FindOneAndUpdateOptions options = new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER)
                .projection(masterProjection);
        return retried(masterId, "update master", () -> masters.findOneAndUpdate(filter, update, options));
    }

    /** Raises the master's version to at least {@code floor}; the master after, or {@code null} if it is gone. */
    Document raiseVersion(Object masterId, long floor) {
        return retried(masterId, "raise version above copies", () -> masters.findOneAndUpdate(eq("_id", masterId),
                Updates.max(VERSION, floor), new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER)
                        .projection(masterProjection)));
    }

    /**
     * Writes {@code master}'s values (as read together with its {@code version}) to every copy of it in {@code target}
     * that holds an older version; returns how many documents changed.
     */
    long writeCopies(SyncTarget target, Object masterId, Document master, long version) {
        List<Bson> sets = new ArrayList<>();
        for (Map.Entry<String, String> copy : target.copies().entrySet()) {
            SyncSchema.Value value = valueAt(master, copy.getKey());
            String to = target.arrayField().isPresent()
                    ? target.arrayField().get() + ".$[" + ELEMENT + "]." + copy.getValue() : copy.getValue();
            sets.add(value.present() ? Updates.set(to, value.value()) : Updates.unset(to));
        }
        String versionPath = target.arrayField().isPresent()
                ? target.arrayField().get() + ".$[" + ELEMENT + "]." + target.versionField() : target.versionField();
        sets.add(Updates.set(versionPath, version));
        Bson update = Updates.combine(sets);
        // the version guard: a copy already written from this version or a newer one is left alone, so a delayed
        // writer can never put an older value back, and repeats are free
        // (only a whole number counts as a version: a copy whose version is an array, NaN, an infinity, a fraction or
        // no number at all is older than any, where a comparison would match one element of the array, or order NaN
        // above every number on the embedded server, and leave the copy stale for good)
        Bson older = nor(and(SyncSchema.wholeVersion(target.versionField()), gte(target.versionField(), version)));
        Bson filter;
        UpdateOptions options = new UpdateOptions();
        if (target.arrayField().isPresent()) {
            filter = elemMatch(target.arrayField().get(), and(eq(target.idField(), masterId), older));
            options.arrayFilters(List.of(new Document(ELEMENT + "." + target.idField(), masterId)
                    .append(ELEMENT + "." + target.versionField(), new Document("$not",
                            new Document("$type", SyncSchema.WHOLE_NUMBERS).append("$gte", version)))));
        } else {
            filter = and(eq(target.idField(), masterId), older);
        }
        MongoCollection<Document> collection = targets.get(target);
        return retried(masterId, "write copies in " + target.collection(),
                () -> collection.updateMany(filter, update, options).getModifiedCount());
    }

    /** Clears the master's flag if it is still the one of operation {@code op}; whether it did. */
    boolean clearFlag(Object masterId, Object op) {
        return retried(masterId, "clear flag", () -> masters.updateOne(and(eq("_id", masterId), eq(FLAG_OP, op)),
                Updates.unset(FLAG)).getModifiedCount()) > 0;
    }

    /**
     * Takes over the master's flag — refreshes its time, so that other sweepers see a fresh flag and leave it — if it
     * still matches {@code sameOp} and {@code condition}; the master after, or {@code null} if another took it.
     */
    Document takeOverFlag(Object masterId, Bson sameOp, Bson condition) {
        return retried(masterId, "take over flag", () -> masters.findOneAndUpdate(
                and(new Document("_id", new Document("$eq", masterId)), sameOp, condition),
                Updates.currentDate(FLAG_AT), new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER)
                        .projection(masterProjection)));
    }

    // ---------------------------------------------------------------- reads

    /** The master's copied fields, version and flag; {@code null} if there is none. */
    Document master(Object masterId) {
        return retried(masterId, "read master", () -> masters.find(eq("_id", masterId)).projection(masterProjection)
                .first());
    }

    /** {@link #master} with its remembered updates. */
    Document masterWithOps(Object masterId) {
        return retried(masterId, "read master", () -> masters.find(eq("_id", masterId))
                .projection(Projections.fields(masterProjection, Projections.include(OPS))).first());
    }

    /** The master as stored, every field. */
    Document wholeMaster(Object masterId) {
        return masters.find(eq("_id", masterId)).first();
    }

    /** The master's version and flag as they are now. */
    Document versionAndFlag(Object masterId) {
        return masters.find(eq("_id", masterId)).projection(Projections.include(VERSION, FLAG)).first();
    }

    /** The copy of {@code masterId} with the highest version in one target (for an array target: the element). */
    Document newestCopy(SyncTarget target, Object masterId) {
        MongoCollection<Document> collection = targets.get(target);
        if (target.arrayField().isPresent()) {
            String array = target.arrayField().get();
            Document top = retried(masterId, "read copy versions", () -> collection.aggregate(List.of(
                    Aggregates.match(elemMatch(array, eq(target.idField(), masterId))),
                    Aggregates.unwind("$" + array),
                    Aggregates.match(and(eq(array + "." + target.idField(), masterId), SyncSchema.wholeVersion(
                            array + "." + target.versionField()))),
                    Aggregates.sort(Sorts.descending(array + "." + target.versionField())),
                    Aggregates.limit(1))).first());
            return top == null ? null : top.get(array, Document.class);
        }
        return retried(masterId, "read copy versions", () -> collection.find(and(eq(target.idField(), masterId),
                SyncSchema.wholeVersion(target.versionField()))).sort(Sorts.descending(target.versionField())).first());
    }

    /** The flagged masters matching {@code flagged}, oldest flag first, their flags only. */
    MongoCursor<Document> flagged(Bson flagged, int batch) {
        return masters.find(flagged).sort(Sorts.ascending(FLAG_AT)).projection(Projections.include(FLAG))
                .batchSize(batch).iterator();
    }

    /** The flagged masters matching {@code flagged}, oldest flag first, their flags only: at most {@code limit}. */
    List<Document> oldestFlagged(Bson flagged, int limit) {
        return masters.find(flagged).sort(Sorts.ascending(FLAG_AT)).projection(Projections.include(FLAG))
                .limit(limit).into(new ArrayList<>());
    }

    /** How many masters carry a flag. */
    long countFlagged() {
        return masters.countDocuments(com.mongodb.client.model.Filters.exists(FLAG_AT));
    }

    /** How many updates the masters remember in all. */
    long countRemembered() {
        Document total = masters.aggregate(List.of(Aggregates.match(com.mongodb.client.model.Filters.exists(OPS
                + ".id")), Aggregates.unwind("$" + OPS), Aggregates.group(null, Accumulators.sum("n", 1)))).first();
        return total == null ? 0 : ((Number) total.get("n")).longValue();
    }

    /** Every master, copied fields, version and flag, in {@code _id} order. */
    MongoCursor<Document> allMasters() {
        // sorted by _id: a scan of several batches without a sort returns some documents twice on DocumentDB
        // (docs/servers.md), and this one counts
        return masters.find().projection(masterProjection).sort(Sorts.ascending("_id")).batchSize(500).iterator();
    }

    /** How many documents of {@code target} match {@code filter}. */
    long countIn(SyncTarget target, Bson filter) {
        return targets.get(target).countDocuments(filter);
    }

    /** Documents of {@code target} matching {@code filter}, at most {@code limit}, with {@code projection} if any. */
    List<Document> findIn(SyncTarget target, Bson filter, Bson projection, int limit) {
        var find = targets.get(target).find(filter).limit(limit);
        if (projection != null) {
            find = find.projection(projection);
        }
        return find.into(new ArrayList<>());
    }

    // ---------------------------------------------------------------- setup

    /**
     * The sparse flag index the sweeper's query uses, the operations index status uses, and on each target the index
     * of copies by master id and version; then records the instance in the registry.
     */
    @Override
    public void ensureIndexes() {
        masters.createIndex(Indexes.ascending(FLAG_AT), new IndexOptions().sparse(true).name("sync_flag"));
        masters.createIndex(Indexes.ascending(OPS + ".id"), new IndexOptions().sparse(true).name("sync_ops"));
        for (Map.Entry<SyncTarget, MongoCollection<Document>> t : targets.entrySet()) {
            // the copies of one master, and (second key) its newest copy, which a master's first update reads
            t.getValue().createIndex(Indexes.ascending(t.getKey().path(t.getKey().idField()),
                    t.getKey().path(t.getKey().versionField())));
        }
        placements.create();
        register();
    }

    /** How the masters' collection is sharded, if that breaks what the instance does. */
    @Override
    public List<String> setupProblems() {
        return placements.problems();
    }

    /**
     * Records this instance's master and targets in {@link SyncFlagConfig#REGISTRY_COLLECTION}, so that an operator's
     * tool can inspect and recover it without the application's code.
     */
    void register() {
        List<Document> targetDocs = new ArrayList<>();
        for (SyncTarget t : config.targets()) {
            List<List<String>> copies = new ArrayList<>();
            t.copies().forEach((from, to) -> copies.add(List.of(from, to)));
            targetDocs.add(new Document("collection", t.collection()).append("idField", t.idField())
                    .append("arrayField", t.arrayField().orElse(null)).append("copies", copies)
                    .append("versionField", t.versionField()));
        }
        Document entry = new Document("_id", config.name()).append("master", config.masterCollection())
                .append("fields", config.masterFields()).append("targets", targetDocs)
                .append("staleAfterMillis", config.staleAfter().toMillis());
        registry.replaceOne(eq("_id", config.name()), entry, new ReplaceOptions().upsert(true));
    }

    /** The settings {@link #register} recorded, as stored: at most {@link #MAX_REGISTERED}, in name order. */
    public static List<Document> registered(MongoDatabase database) {
        return database.getCollection(SyncFlagConfig.REGISTRY_COLLECTION).find().sort(new Document("_id", 1))
                .limit(MAX_REGISTERED).into(new ArrayList<>());
    }
}
