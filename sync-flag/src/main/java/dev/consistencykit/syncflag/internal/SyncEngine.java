package dev.consistencykit.syncflag.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.elemMatch;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Filters.ne;
import static com.mongodb.client.model.Filters.not;
import static com.mongodb.client.model.Filters.or;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;

import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.google.common.hash.Hashing;
import com.mongodb.MongoServerException;
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
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.Inputs;
import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.Listeners;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.OutcomeUnknownException;
import dev.consistencykit.core.ReadSettings;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.syncflag.MasterMissingException;
import dev.consistencykit.syncflag.MasterUpdate;
import dev.consistencykit.syncflag.SyncFlagConfig;
import dev.consistencykit.syncflag.SyncFlagMetrics;
import dev.consistencykit.syncflag.SyncListener.Source;
import dev.consistencykit.syncflag.SyncListener;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.syncflag.SyncVerification;
import dev.consistencykit.syncflag.UpdateRejectedException;

/**
 * The sync-flag protocol. See the package documentation of {@code dev.consistencykit.syncflag} for the design; the
 * comments here say why each guard is there.
 */
public final class SyncEngine {

    /** State of an operation whose propagation is pending: its flag is on its master. */
    public static final String SYNCING = "SYNCING";
    /** State of an operation whose copies are in step (or carried by a newer update's propagation). */
    public static final String SYNCED = "SYNCED";

    private static final Logger LOG = LoggerFactory.getLogger(SyncEngine.class);
    private static final String FLAG = SyncFlagConfig.FLAG_FIELD;
    private static final String FLAG_OP = FLAG + ".op";
    private static final String FLAG_AT = FLAG + ".at";
    private static final String VERSION = SyncFlagConfig.VERSION_FIELD;
    private static final String OPS = SyncFlagConfig.OPS_FIELD;
    private static final String RESYNC_FINGERPRINT = "resync";
    private static final String ELEMENT = "e";
    private static final int RECORD_ATTEMPTS = 3;
    private static final JsonWriterSettings CANONICAL = JsonWriterSettings.builder().outputMode(JsonMode.EXTENDED)
            .build();

    private final SyncFlagConfig config;
    private final MongoCollection<Document> masters;
    private final MongoCollection<Document> registry;
    private final Map<SyncTarget, MongoCollection<Document>> targets = new LinkedHashMap<>();
    private final ServerClock clock;
    private final SyncListener listener;
    private final Bson masterProjection;

    private final LongAdder updates = new LongAdder();
    private final LongAdder propagations = new LongAdder();
    private final LongAdder copiesWritten = new LongAdder();
    private final LongAdder copiesRepaired = new LongAdder();
    private final LongAdder flagsTakenOver = new LongAdder();
    private final LongAdder flagsLeft = new LongAdder();

    /** An update checked and ready to send. */
    public record Prepared(OperationId id, Object masterId, BsonDocument update, boolean touchesCopies,
                           String fingerprint) {
    }

    /** The master as the update left it (or found it, when the update had been recorded before). */
    private record Recorded(Document master, boolean fresh) {
    }

    /** The engine over {@code database} (already checked for an acknowledged write concern). */
    public SyncEngine(SyncFlagConfig config, MongoDatabase database, ServerClock clock, SyncListener listener) {
        database = ReadSettings.ownReads(database);
        this.config = Objects.requireNonNull(config, "config");
        this.masters = database.getCollection(config.masterCollection());
        this.registry = database.getCollection(SyncFlagConfig.REGISTRY_COLLECTION);
        for (SyncTarget target : config.targets()) {
            targets.put(target, database.getCollection(target.collection()));
        }
        this.clock = Objects.requireNonNull(clock, "clock");
        this.listener = Objects.requireNonNull(listener, "listener");
        List<String> fields = new ArrayList<>(config.masterFields());
        fields.add(VERSION);
        fields.add(FLAG);
        this.masterProjection = Projections.include(fields);
    }

    // ---------------------------------------------------------------- indexes and validation

    /** The sparse flag index the sweeper's query uses, the operations index status uses, and the targets' id indexes. */
    public void ensureIndexes() {
        masters.createIndex(Indexes.ascending(FLAG_AT), new IndexOptions().sparse(true).name("sync_flag"));
        masters.createIndex(Indexes.ascending(OPS + ".id"), new IndexOptions().sparse(true).name("sync_ops"));
        for (Map.Entry<SyncTarget, MongoCollection<Document>> t : targets.entrySet()) {
            t.getValue().createIndex(Indexes.ascending(t.getKey().path(t.getKey().idField())));
        }
        register();
    }

    /**
     * Records this instance's master and targets in {@link SyncFlagConfig#REGISTRY_COLLECTION}, so that an operator's
     * tool can inspect and recover it without the application's code.
     */
    private void register() {
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
        registry.replaceOne(eq("_id", config.name()), entry, new com.mongodb.client.model.ReplaceOptions().upsert(true));
    }

    /** The settings {@link #register} recorded, as builder calls. */
    public static List<Document> registered(MongoDatabase database) {
        return database.getCollection(SyncFlagConfig.REGISTRY_COLLECTION).find().into(new ArrayList<>());
    }

    /**
     * Checks an update before anything is sent: a valid master id, operators only, nothing reserved touched, no copied
     * field removed.
     */
    public Prepared prepare(MasterUpdate change) {
        Objects.requireNonNull(change, "change");
        Object masterId = Inputs.documentId(config.name(), "masterId", change.masterId(),
                masters.getCodecRegistry());
        BsonDocument update = Inputs.updateSpec(config.name(), "update", change.update(),
                masters.getCodecRegistry());
        boolean touches = false;
        for (UpdatePaths.Touched t : UpdatePaths.of(update)) {
            if (t.path().isEmpty() || t.path().startsWith("$") || t.path().contains("..")) {
                throw new InvalidInputException(config.name(), "update", "update " + t.operator()
                        + " names an invalid field '" + t.path() + "'");
            }
            if (SyncFlagConfig.RESERVED_FIELDS.contains(UpdatePaths.top(t.path()))) {
                throw new InvalidInputException(config.name(), "update", "update " + t.operator() + " touches '"
                        + t.path() + "', a field the sync flag keeps (reserved: " + SyncFlagConfig.RESERVED_FIELDS
                        + ")");
            }
            for (String field : config.masterFields()) {
                if (t.removes() && UpdatePaths.covers(t.path(), field)) {
                    throw new InvalidInputException(config.name(), "update", "update " + t.operator()
                            + " removes '" + t.path() + "', which holds the copied field '" + field
                            + "'; set it to a value instead");
                }
                touches |= UpdatePaths.overlaps(t.path(), field);
            }
        }
        // the id by MongoDB's equality (1 and 1L are one master; "1" and 1 are two), the update as encoded
        BsonValue key = Inputs.idKey(masterId, masters.getCodecRegistry());
        String canonical = new BsonDocument("m", key).toJson(CANONICAL) + update.toJson(CANONICAL);
        String fingerprint = Hashing.sha256().hashString(canonical, StandardCharsets.UTF_8).toString()
                .substring(0, 32);
        return new Prepared(change.id(), masterId, update, touches, fingerprint);
    }

    // ---------------------------------------------------------------- update

    /** Records the update on its master (one atomic write) and returns its id. */
    public OperationId submit(Prepared p) {
        record(p);
        return p.id();
    }

    /** Records the update and propagates it in this thread. */
    public OperationResult apply(Prepared p) {
        Recorded r = record(p);
        Document flag = r.master().get(FLAG, Document.class);
        if (flag == null) {
            // nothing to propagate: the update left the copies alone, or its propagation already finished
            return OperationResult.committed(p.id(), SYNCED);
        }
        if (!Objects.equals(flag.get("op"), p.id().value()) && !r.fresh()) {
            // a newer update flagged the master after ours: its propagation copies our value or a newer one
            return OperationResult.committed(p.id(), SYNCED);
        }
        propagate(r.master(), Source.UPDATE);
        return OperationResult.committed(p.id(), SYNCED);
    }

    /** A resync of {@code masterId}: bumps its version, flags it and propagates its current values. */
    public long resync(Object masterId) {
        Object id = Inputs.documentId(config.name(), "masterId", masterId, masters.getCodecRegistry());
        Prepared p = new Prepared(OperationId.random(), id, new BsonDocument(), true, RESYNC_FINGERPRINT);
        Recorded r = record(p);
        return propagate(r.master(), Source.RESYNC).written();
    }

    private Recorded record(Prepared p) {
        Object opId = p.id().value();
        List<Bson> parts = new ArrayList<>();
        if (!p.update().isEmpty()) {
            parts.add(p.update());
        }
        if (p.touchesCopies()) {
            parts.add(Updates.inc(VERSION, 1L));
            parts.add(Updates.set(FLAG_OP, opId));
            parts.add(Updates.currentDate(FLAG_AT));
        }
        parts.add(Updates.pushEach(OPS, List.of(new Document("id", opId).append("h", p.fingerprint())),
                new PushOptions().slice(-config.rememberedUpdates())));
        Bson update = Updates.combine(parts);
        // the guard makes a retried or repeated update a no-op: the master remembers the ids it applied
        Bson filter = and(eq("_id", p.masterId()), ne(OPS + ".id", opId));
        FindOneAndUpdateOptions options = new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER)
                .projection(masterProjection);
        for (int attempt = 1; attempt <= RECORD_ATTEMPTS; attempt++) {
            Document after;
            try {
                after = config.retryPolicy().execute(config.name(), p.masterId(), "update master",
                        () -> masters.findOneAndUpdate(filter, update, options));
            } catch (MongoServerException e) {
                // not transient (the retry policy rethrows only those): the server refused the update, so it
                // did not apply
                throw new UpdateRejectedException(config.name(), p.masterId(), e);
            }
            if (after != null) {
                updates.increment();
                long version = versionOf(after);
                LOG.debug("[{}] updated master {} (op {}, version {}, flagged {})", config.name(), p.masterId(), opId,
                        version, p.touchesCopies());
                notify(() -> listener.onMasterUpdated(p.id(), p.masterId(), version, p.touchesCopies()));
                return new Recorded(after, true);
            }
            Document existing = config.retryPolicy().execute(config.name(), p.masterId(), "read master",
                    () -> masters.find(eq("_id", p.masterId()))
                            .projection(Projections.fields(masterProjection, Projections.include(OPS))).first());
            if (existing == null) {
                throw new MasterMissingException(config.name(), config.masterCollection(), p.masterId());
            }
            for (Document op : existing.getList(OPS, Document.class, List.of())) {
                if (Objects.equals(op.get("id"), opId)) {
                    if (!p.fingerprint().equals(op.getString("h"))) {
                        throw new IdempotencyConflictException(config.name(), opId, "operation " + opId
                                + " was applied to master " + p.masterId() + " with another update; nothing was"
                                + " written");
                    }
                    existing.remove(OPS);
                    return new Recorded(existing, false);
                }
            }
            // neither applied nor remembered: our id was pushed out of the remembered window between the write and
            // the read (many updates in between), or the write raced; try again
            LOG.debug("[{}] update of master {} matched nothing and op {} is not remembered; attempt {}",
                    config.name(), p.masterId(), opId, attempt);
        }
        throw new OutcomeUnknownException(config.name(), p.masterId(), "update of master " + p.masterId()
                + " matched nothing and its operation " + opId + " is not among the master's remembered updates;"
                + " raise rememberedUpdates", null);
    }

    // ---------------------------------------------------------------- propagation

    private record Propagated(long written, boolean cleared) {
    }

    /**
     * Writes {@code master}'s values (as read together with its version) to every copy with a lower version, then
     * clears the flag if it is still the one {@code master} carried.
     */
    private Propagated propagate(Document master, Source source) {
        Object masterId = master.get("_id");
        long version = versionOf(master);
        Document flag = master.get(FLAG, Document.class);
        long written = 0;
        for (Map.Entry<SyncTarget, MongoCollection<Document>> t : targets.entrySet()) {
            written += writeCopies(t.getKey(), t.getValue(), masterId, master, version);
        }
        boolean cleared = false;
        if (flag != null) {
            Object op = flag.get("op");
            // only our own flag: a newer update's flag means its propagation is still to come
            cleared = config.retryPolicy().execute(config.name(), masterId, "clear flag",
                    () -> masters.updateOne(and(eq("_id", masterId), eq(FLAG_OP, op)), Updates.unset(FLAG))
                            .getModifiedCount()) > 0;
        }
        propagations.increment();
        (source == Source.UPDATE ? copiesWritten : copiesRepaired).add(written);
        if (!cleared) {
            flagsLeft.increment();
        }
        long total = written;
        boolean wasCleared = cleared;
        LOG.debug("[{}] propagated master {} version {}: {} copies written, flag {} ({})", config.name(), masterId,
                version, written, cleared ? "cleared" : "left", source);
        notify(() -> listener.onPropagated(masterId, version, total, wasCleared, source));
        return new Propagated(written, cleared);
    }

    private long writeCopies(SyncTarget target, MongoCollection<Document> collection, Object masterId,
                             Document master, long version) {
        List<Bson> sets = new ArrayList<>();
        for (Map.Entry<String, String> copy : target.copies().entrySet()) {
            Value value = valueAt(master, copy.getKey());
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
        Bson older = not(gte(target.versionField(), version));
        Bson filter;
        UpdateOptions options = new UpdateOptions();
        if (target.arrayField().isPresent()) {
            filter = elemMatch(target.arrayField().get(), and(eq(target.idField(), masterId), older));
            options.arrayFilters(List.of(new Document(ELEMENT + "." + target.idField(), masterId)
                    .append(ELEMENT + "." + target.versionField(), new Document("$not",
                            new Document("$gte", version)))));
        } else {
            filter = and(eq(target.idField(), masterId), older);
        }
        return config.retryPolicy().execute(config.name(), masterId, "write copies in " + target.collection(),
                () -> collection.updateMany(filter, update, options).getModifiedCount());
    }

    // ---------------------------------------------------------------- sweeper and read repair

    /**
     * Takes over every flag older than {@code staleAfter} (server time) and propagates its master; zero takes over
     * every flag.
     */
    public RecoveryReport sweep(Duration staleAfter, Source source) {
        long start = System.nanoTime();
        Bson stale = staleAfter.isZero() ? exists(FLAG_AT) : lte(FLAG_AT, clock.cutoff(staleAfter));
        Set<Object> seen = new HashSet<>();
        int examined = 0;
        int forward = 0;
        int skipped = 0;
        // one cursor in flag-time order; a flag taken over gets a fresh time and may come by again later in the same
        // cursor, hence the seen set
        try (MongoCursor<Document> cursor = masters.find(stale).sort(Sorts.ascending(FLAG_AT))
                .projection(Projections.include(FLAG)).batchSize(config.sweepBatch()).iterator()) {
            while (cursor.hasNext()) {
                Document found = cursor.next();
                if (!seen.add(found.get("_id"))) {
                    continue;
                }
                examined++;
                Document flag = found.get(FLAG, Document.class);
                if (takeOver(found.get("_id"), eq(FLAG_OP, flag.get("op")), stale, source)) {
                    forward++;
                } else {
                    skipped++;
                }
            }
        }
        RecoveryReport report = new RecoveryReport(config.name(), examined, forward, 0, skipped,
                Duration.ofNanos(System.nanoTime() - start));
        if (forward > 0) {
            LOG.info("[{}] took over {} flags older than {} ({} already taken over or cleared by others)",
                    config.name(), forward, staleAfter, skipped);
        }
        return report;
    }

    /**
     * Read repair: if {@code master} (as a reader just read it) carries a flag, takes it over with one
     * compare-and-set on the flag it saw and propagates. Concurrent readers of the same flag: one wins.
     */
    public boolean readRepair(Document master) {
        Objects.requireNonNull(master, "master");
        if (!(master.get(FLAG) instanceof Document flag) || !master.containsKey("_id")) {
            return false;
        }
        // the caller's document is input: its id and the flag's operation id must be plain values, and they are
        // matched with $eq, so nothing the caller passes can reach the server as an operator
        Object id = Inputs.documentId(config.name(), "master._id", master.get("_id"), masters.getCodecRegistry());
        Object op = Inputs.operationId(config.name(), "master." + FLAG + ".op", flag.get("op"));
        // the flag as the reader saw it: not refreshed since (a take-over stamps a later time). Compared below the
        // next millisecond rather than for equality, because a stored time may carry more precision than the
        // millisecond a reader gets back (the embedded server keeps the server's full clock precision)
        Bson seen = flag.get("at") instanceof Date at ? lt(FLAG_AT, new Date(at.getTime() + 1)) : exists(FLAG_AT);
        return takeOver(id, new Document(FLAG_OP, new Document("$eq", op)), seen, Source.READ_REPAIR);
    }

    private boolean takeOver(Object masterId, Bson sameOp, Bson condition, Source source) {
        // refreshing the flag's time is the claim: other sweepers now see a fresh flag and leave it; the operation id
        // stays, so the update's own process can still clear it when it finishes
        Document claimed = config.retryPolicy().execute(config.name(), masterId, "take over flag",
                () -> masters.findOneAndUpdate(and(new Document("_id", new Document("$eq", masterId)), sameOp,
                                condition),
                        Updates.currentDate(FLAG_AT), new FindOneAndUpdateOptions()
                                .returnDocument(ReturnDocument.AFTER).projection(masterProjection)));
        if (claimed == null) {
            return false;
        }
        flagsTakenOver.increment();
        propagate(claimed, source);
        return true;
    }

    // ---------------------------------------------------------------- verify and status

    /** Compares every copy of every master with its master; with {@code repair}, resyncs masters with stale copies. */
    public SyncVerification verify(boolean repair) {
        long start = System.nanoTime();
        long masterCount = 0;
        long copies = 0;
        long stale = 0;
        long staleMasters = 0;
        long repaired = 0;
        List<String> samples = new ArrayList<>();
        try (MongoCursor<Document> cursor = masters.find().projection(masterProjection).batchSize(500).iterator()) {
            while (cursor.hasNext()) {
                Document master = cursor.next();
                masterCount++;
                long staleHere = 0;
                for (Map.Entry<SyncTarget, MongoCollection<Document>> t : targets.entrySet()) {
                    SyncTarget target = t.getKey();
                    Object id = master.get("_id");
                    copies += t.getValue().countDocuments(eq(target.path(target.idField()), id));
                    long s = t.getValue().countDocuments(staleCopies(target, master));
                    if (s > 0 && samples.size() < SyncVerification.MAX_SAMPLES) {
                        samples.add(s + " document(s) of " + target.collection() + " hold stale copies of master " + id
                                + " " + valuesOf(master));
                    }
                    staleHere += s;
                }
                stale += staleHere;
                if (staleHere > 0) {
                    staleMasters++;
                    if (repair) {
                        repaired += resync(master.get("_id"));
                    }
                }
            }
        }
        if (stale > 0) {
            LOG.warn("[{}] verify found {} stale copies of {} masters{}", config.name(), stale, staleMasters,
                    repair ? "; repaired " + repaired : "");
        }
        return new SyncVerification(config.name(), masterCount, copies, stale, staleMasters, repaired, samples,
                Duration.ofNanos(System.nanoTime() - start));
    }

    private Bson staleCopies(SyncTarget target, Document master) {
        List<Bson> differs = new ArrayList<>();
        for (Map.Entry<String, String> copy : target.copies().entrySet()) {
            Value value = valueAt(master, copy.getKey());
            differs.add(value.present() ? ne(copy.getValue(), value.value()) : exists(copy.getValue()));
        }
        Bson anyDiffers = differs.size() == 1 ? differs.get(0) : or(differs);
        Object id = master.get("_id");
        if (target.arrayField().isPresent()) {
            return elemMatch(target.arrayField().get(), and(eq(target.idField(), id), anyDiffers));
        }
        return and(eq(target.idField(), id), anyDiffers);
    }

    private Map<String, Object> valuesOf(Document master) {
        Map<String, Object> values = new LinkedHashMap<>();
        for (String field : config.masterFields()) {
            Value value = valueAt(master, field);
            values.put(field, value.present() ? value.value() : "(missing)");
        }
        return values;
    }

    /** Masters whose flag is older than {@code staleAfter}: propagations that did not finish, oldest first. */
    public List<InterruptedOperation> interrupted(Duration staleAfter, int limit) {
        Bson stale = staleAfter.isZero() ? exists(FLAG_AT) : lte(FLAG_AT, clock.cutoff(staleAfter));
        List<InterruptedOperation> out = new ArrayList<>();
        for (Document master : masters.find(stale).projection(Projections.include(FLAG))
                .sort(Sorts.ascending(FLAG_AT)).limit(limit)) {
            Document flag = master.get(FLAG, Document.class);
            out.add(new InterruptedOperation(master.get("_id"), "flagged", clock.ageOf(flag.getDate("at").toInstant()),
                    config.masterCollection() + ", update " + flag.get("op")));
        }
        return out;
    }

    /** Operations by state, from the masters' remembered operations and their flags. */
    public StrategyStatus status() {
        long flagged = masters.countDocuments(exists(FLAG_AT));
        Document oldest = masters.find(exists(FLAG_AT)).sort(Sorts.ascending(FLAG_AT))
                .projection(Projections.include(FLAG_AT)).limit(1).first();
        Optional<Duration> age = Optional.ofNullable(oldest)
                .map(d -> d.get(FLAG, Document.class).getDate("at"))
                .map(at -> clock.ageOf(at.toInstant()));
        Document total = masters.aggregate(List.of(Aggregates.match(exists(OPS + ".id")), Aggregates.unwind("$" + OPS),
                Aggregates.group(null, Accumulators.sum("n", 1)))).first();
        long ops = total == null ? 0 : ((Number) total.get("n")).longValue();
        Map<String, Long> counts = new HashMap<>();
        counts.put(SYNCING, flagged);
        counts.put(SYNCED, Math.max(0, ops - flagged));
        return new StrategyStatus(config.name(), counts, flagged, age);
    }

    /** The counters since this engine was built. */
    public SyncFlagMetrics metrics() {
        return new SyncFlagMetrics(updates.sum(), propagations.sum(), copiesWritten.sum(), copiesRepaired.sum(),
                flagsTakenOver.sum(), flagsLeft.sum());
    }

    // ---------------------------------------------------------------- helpers

    private static long versionOf(Document master) {
        Object v = master.get(VERSION);
        return v instanceof Number n ? n.longValue() : 0L;
    }

    /** A master field's value: absent, or present (possibly {@code null}). */
    record Value(boolean present, Object value) {
    }

    /** The value at a dotted path through subdocuments; absent when a segment is missing or not a subdocument. */
    static Value valueAt(Document document, String path) {
        Object current = document;
        for (String segment : path.split("\\.", -1)) {
            if (!(current instanceof Document d) || !d.containsKey(segment)) {
                return new Value(false, null);
            }
            current = d.get(segment);
        }
        return new Value(true, current);
    }

    private void notify(Runnable call) {
        Listeners.call(config.name(), call);
    }
}
