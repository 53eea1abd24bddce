package dev.consistencykit.syncflag.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.Document;

import com.google.common.hash.Hashing;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;

import dev.consistencykit.core.Inputs;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.syncflag.MasterUpdate;
import dev.consistencykit.syncflag.SyncFlagConfig;
import dev.consistencykit.syncflag.SyncFlagListener;
import dev.consistencykit.syncflag.SyncTarget;

/**
 * The sync-flag protocol. See the package documentation of {@code dev.consistencykit.syncflag} for the design; the
 * comments here say why each guard is there.
 */
public final class SyncEngine extends SyncAudit {

    /** The engine over {@code database} (already checked for an acknowledged write concern). */
    public SyncEngine(SyncFlagConfig config, MongoDatabase database, ServerClock clock, SyncFlagListener listener) {
        super(config, database, clock, listener);
    }

    // ---------------------------------------------------------------- indexes and validation

    /**
     * The sparse flag index the sweeper's query uses, the operations index status uses, and on each target the index
     * of copies by master id and version.
     */
    public void ensureIndexes() {
        masters.createIndex(Indexes.ascending(FLAG_AT), new IndexOptions().sparse(true).name("sync_flag"));
        masters.createIndex(Indexes.ascending(OPS + ".id"), new IndexOptions().sparse(true).name("sync_ops"));
        for (Map.Entry<SyncTarget, MongoCollection<Document>> t : targets.entrySet()) {
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
}
