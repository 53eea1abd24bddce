package dev.consistencykit.syncflag.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.not;
import static com.mongodb.client.model.Filters.or;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;

import org.bson.Document;
import org.bson.conversions.Bson;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Projections;

import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.Listeners;
import dev.consistencykit.core.spi.ReadSettings;
import dev.consistencykit.syncflag.SyncFlagConfig;
import dev.consistencykit.syncflag.SyncFlagListener;
import dev.consistencykit.syncflag.SyncState;
import dev.consistencykit.syncflag.SyncTarget;

/**
 * The sync flag's stored fields, the engine's collections and counters, and the helpers every part of the
 * {@link SyncEngine} uses.
 */
final class SyncFields {

    /** State of an operation whose propagation is pending: its flag is on its master. */
    public static final String SYNCING = SyncState.SYNCING.stored();
    /** State of an operation whose copies are in step (or carried by a newer update's propagation). */
    public static final String SYNCED = SyncState.SYNCED.stored();

    static final Logger LOG = LoggerFactory.getLogger(SyncEngine.class);
    static final String FLAG = SyncFlagConfig.FLAG_FIELD;
    static final String FLAG_OP = FLAG + ".op";
    static final String FLAG_AT = FLAG + ".at";
    static final String VERSION = SyncFlagConfig.VERSION_FIELD;
    static final String OPS = SyncFlagConfig.OPS_FIELD;
    static final String RESYNC_FINGERPRINT = "resync";
    static final String ELEMENT = "e";
    static final int RECORD_ATTEMPTS = 3;
    static final JsonWriterSettings CANONICAL = JsonWriterSettings.builder().outputMode(JsonMode.EXTENDED)
            .build();

    final SyncFlagConfig config;
    final MongoCollection<Document> masters;
    final MongoCollection<Document> registry;
    final Map<SyncTarget, MongoCollection<Document>> targets = new LinkedHashMap<>();
    final ServerClock clock;
    final SyncFlagListener listener;
    final Bson masterProjection;

    final LongAdder updates = new LongAdder();
    final LongAdder propagations = new LongAdder();
    final LongAdder copiesWritten = new LongAdder();
    final LongAdder copiesRepaired = new LongAdder();
    final LongAdder flagsTakenOver = new LongAdder();
    final LongAdder flagsLeft = new LongAdder();

    /** The master as the update left it (or found it, when the update had been recorded before). */
    record Recorded(Document master, boolean fresh) {
    }

    /** Builds the engine's state (see {@link SyncEngine}). */
    SyncFields(SyncFlagConfig config, MongoDatabase database, ServerClock clock, SyncFlagListener listener) {
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

    // ---------------------------------------------------------------- helpers

    static long versionOf(Document master) {
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

    void notify(Runnable call) {
        Listeners.call(config.name(), call);
    }
}
