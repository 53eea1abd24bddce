package dev.consistencykit.syncflag.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static dev.consistencykit.syncflag.internal.SyncFields.CANONICAL;
import static dev.consistencykit.syncflag.internal.SyncFields.FLAG_AT;
import static dev.consistencykit.syncflag.internal.SyncFields.OPS;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Objects;

import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.Document;

import com.google.common.hash.Hashing;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;

import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.OperationView;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.StrategyEngine;
import dev.consistencykit.core.spi.UpdateGrammar;
import dev.consistencykit.syncflag.MasterUpdate;
import dev.consistencykit.syncflag.SyncFlagConfig;
import dev.consistencykit.syncflag.SyncFlagListener.Source;
import dev.consistencykit.syncflag.SyncFlagListener;
import dev.consistencykit.syncflag.SyncFlagMetrics;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.syncflag.SyncVerification;

/**
 * The sync-flag protocol. See the package documentation of {@code dev.consistencykit.syncflag} for the design; the
 * comments here say why each guard is there.
 */
public final class SyncEngine implements StrategyEngine<SyncFlagMetrics> {

    /** An update checked and ready to send. */
    public record Prepared(OperationId id, Object masterId, BsonDocument update, boolean touchesCopies,
                           String fingerprint) {
    }

    private final SyncFields fields;
    private final SyncPropagation propagation;
    private final SyncUpdates updates;
    private final SyncRecovery recovery;
    private final SyncAudit audit;

    /**
     * The engine over {@code database} (already checked for an acknowledged write concern): the shared fields, the
     * propagation of a master to its copies, the updates that flag a master, the sweeper's and readers' take-over,
     * and the operators' reads.
     */
    public SyncEngine(SyncFlagConfig config, MongoDatabase database, ServerClock clock, SyncFlagListener listener) {
        this.fields = new SyncFields(config, database, clock, listener);
        this.propagation = new SyncPropagation(fields);
        this.updates = new SyncUpdates(fields, propagation);
        this.recovery = new SyncRecovery(fields, propagation);
        this.audit = new SyncAudit(fields, updates);
    }

    /** Records the update on its master (one atomic write) and returns its id. */
    public OperationId submit(Prepared p) {
        return updates.submit(p);
    }

    /** Records the update and propagates it in this thread. */
    public OperationResult apply(Prepared p) {
        return updates.apply(p);
    }

    /** A resync of {@code masterId}: bumps its version, flags it and propagates its current values. */
    public long resync(Object masterId) {
        return updates.resync(masterId);
    }

    /** Takes over every flag older than {@code staleAfter} and propagates its master; zero takes over every flag. */
    public RecoveryReport sweep(Duration staleAfter, Source source) {
        return recovery.sweep(staleAfter, source);
    }

    /** The sweeper's pass: {@link #sweep} of every flag older than {@code staleAfter}. */
    @Override
    public RecoveryReport recover(Duration staleAfter) {
        return recovery.sweep(staleAfter, Source.SWEEP);
    }

    /** {@link #recover(Duration)} of the master {@code id} alone. */
    @Override
    public RecoveryReport recoverOne(Object id, Duration staleAfter) {
        return recovery.sweep(staleAfter, Source.SWEEP, id);
    }

    /** The master {@code id} and its copies. */
    @Override
    public Optional<OperationView> describe(Object id) {
        return audit.describe(id);
    }

    /** Read repair of {@code master} as a reader just read it: takes over its flag, if any, and propagates. */
    public boolean readRepair(Document master) {
        return recovery.readRepair(master);
    }

    /** Compares every copy of every master with its master; with {@code repair}, resyncs masters with stale copies. */
    public SyncVerification verify(boolean repair) {
        return audit.verify(repair);
    }

    /** Masters whose flag is older than {@code staleAfter}: propagations that did not finish, oldest first. */
    @Override
    public List<InterruptedOperation> interrupted(Duration staleAfter, int limit) {
        return audit.interrupted(staleAfter, limit);
    }

    /** Operations by state, from the masters' remembered operations and their flags. */
    @Override
    public StrategyStatus status() {
        return audit.status();
    }

    /** The counters since this engine was built. */
    @Override
    public SyncFlagMetrics metrics() {
        return audit.metrics();
    }

    // ---------------------------------------------------------------- indexes and validation

    /**
     * The sparse flag index the sweeper's query uses, the operations index status uses, and on each target the index
     * of copies by master id and version.
     */
    @Override
    public void ensureIndexes() {
        fields.masters.createIndex(Indexes.ascending(FLAG_AT), new IndexOptions().sparse(true).name("sync_flag"));
        fields.masters.createIndex(Indexes.ascending(OPS + ".id"), new IndexOptions().sparse(true).name("sync_ops"));
        for (Map.Entry<SyncTarget, MongoCollection<Document>> t : fields.targets.entrySet()) {
            // the copies of one master, and (second key) its newest copy, which a master's first update reads
            t.getValue().createIndex(Indexes.ascending(t.getKey().path(t.getKey().idField()),
                    t.getKey().path(t.getKey().versionField())));
        }
        register();
    }

    /**
     * Records this instance's master and targets in {@link SyncFlagConfig#REGISTRY_COLLECTION}, so that an operator's
     * tool can inspect and recover it without the application's code.
     */
    void register() {
        List<Document> targetDocs = new ArrayList<>();
        for (SyncTarget t : fields.config.targets()) {
            List<List<String>> copies = new ArrayList<>();
            t.copies().forEach((from, to) -> copies.add(List.of(from, to)));
            targetDocs.add(new Document("collection", t.collection()).append("idField", t.idField())
                    .append("arrayField", t.arrayField().orElse(null)).append("copies", copies)
                    .append("versionField", t.versionField()));
        }
        Document entry = new Document("_id", fields.config.name()).append("master", fields.config.masterCollection())
                .append("fields", fields.config.masterFields()).append("targets", targetDocs)
                .append("staleAfterMillis", fields.config.staleAfter().toMillis());
        fields.registry.replaceOne(eq("_id", fields.config.name()), entry, new com.mongodb.client.model
                .ReplaceOptions().upsert(true));
    }

    /** The most registered instances read: one document each, so far more than any application has. */
    static final int MAX_REGISTERED = 1_000;

    /** The settings {@link #register} recorded, as builder calls: at most {@link #MAX_REGISTERED}, in name order. */
    public static List<Document> registered(MongoDatabase database) {
        return database.getCollection(SyncFlagConfig.REGISTRY_COLLECTION).find().sort(new Document("_id", 1))
                .limit(MAX_REGISTERED).into(new ArrayList<>());
    }

    /**
     * Checks an update before anything is sent: a valid master id, operators only, nothing reserved touched, no copied
     * field removed.
     */
    public Prepared prepare(MasterUpdate change) {
        Objects.requireNonNull(change, "change");
        Object masterId = Ids.documentId(fields.config.name(), "masterId", change.masterId(),
                fields.masters.getCodecRegistry());
        BsonDocument update = UpdateGrammar.updateSpec(fields.config.name(), "update", change.update(),
                fields.masters.getCodecRegistry());
        boolean touches = false;
        for (UpdatePaths.Touched t : UpdatePaths.of(update)) {
            if (t.path().isEmpty() || t.path().startsWith("$") || t.path().contains("..")) {
                throw new InvalidInputException(fields.config.name(), "update", "update " + t.operator()
                        + " names an invalid field '" + t.path() + "'");
            }
            if (SyncFlagConfig.RESERVED_FIELDS.contains(UpdatePaths.top(t.path()))) {
                throw new InvalidInputException(fields.config.name(), "update", "update " + t.operator() + " touches '"
                        + t.path() + "', a field the sync flag keeps (reserved: " + SyncFlagConfig.RESERVED_FIELDS
                        + ")");
            }
            for (String field : fields.config.masterFields()) {
                if (t.removes() && UpdatePaths.covers(t.path(), field)) {
                    throw new InvalidInputException(fields.config.name(), "update", "update " + t.operator()
                            + " removes '" + t.path() + "', which holds the copied field '" + field
                            + "'; set it to a value instead");
                }
                touches |= UpdatePaths.overlaps(t.path(), field);
            }
        }
        // the id by MongoDB's equality (1 and 1L are one master; "1" and 1 are two), the update as encoded
        BsonValue key = Ids.idKey(masterId, fields.masters.getCodecRegistry());
        String canonical = new BsonDocument("m", key).toJson(CANONICAL) + update.toJson(CANONICAL);
        String fingerprint = Hashing.sha256().hashString(canonical, StandardCharsets.UTF_8).toString()
                .substring(0, 32);
        return new Prepared(change.id(), masterId, update, touches, fingerprint);
    }
}
