package dev.consistencykit.syncflag.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.elemMatch;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Filters.ne;
import static com.mongodb.client.model.Filters.or;
import static dev.consistencykit.syncflag.internal.SyncSchema.FLAG;
import static dev.consistencykit.syncflag.internal.SyncSchema.FLAG_AT;
import static dev.consistencykit.syncflag.internal.SyncSchema.SYNCED;
import static dev.consistencykit.syncflag.internal.SyncSchema.SYNCING;
import static dev.consistencykit.syncflag.internal.SyncSchema.VERSION;
import static dev.consistencykit.syncflag.internal.SyncSchema.valueAt;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.bson.Document;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.Projections;

import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.OperationView;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.PatternInspection;
import dev.consistencykit.syncflag.SyncFlagConfig;
import dev.consistencykit.syncflag.SyncFlagMetrics;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.syncflag.SyncVerification;
import dev.consistencykit.syncflag.internal.SyncSchema.Value;

/**
 * Reads for operators: verification of every copy against its master, one master described, interrupted operations,
 * status and counters.
 */
public final class SyncAudit implements PatternInspection<SyncFlagMetrics> {

    private static final Logger LOG = LoggerFactory.getLogger(SyncAudit.class);

    private final SyncFlagConfig config;
    private final SyncStore store;
    private final SyncUpdates updates;
    private final SyncCounters counters;
    private final ServerClock clock;

    /** The operators' reads, over the store; a repair is a resync ({@code updates}). */
    SyncAudit(SyncFlagConfig config, SyncStore store, SyncUpdates updates, SyncCounters counters, ServerClock clock) {
        this.config = config;
        this.store = store;
        this.updates = updates;
        this.counters = counters;
        this.clock = clock;
    }

    /** Compares every copy of every master with its master; with {@code repair}, resyncs masters with stale copies. */
    public SyncVerification verify(boolean repair) {
        long start = System.nanoTime();
        long masterCount = 0;
        long copies = 0;
        long stale = 0;
        long staleMasters = 0;
        long repaired = 0;
        long inFlight = 0;
        List<String> samples = new ArrayList<>();
        try (MongoCursor<Document> cursor = store.allMasters()) {
            while (cursor.hasNext()) {
                Document master = cursor.next();
                masterCount++;
                long staleHere = 0;
                for (SyncTarget target : store.targets()) {
                    Object id = master.get("_id");
                    copies += store.countIn(target, eq(target.path(target.idField()), id));
                    long s = store.countIn(target, staleCopies(target, master));
                    if (s > 0 && samples.size() < SyncVerification.MAX_SAMPLES) {
                        samples.add(s + " document(s) of " + target.collection() + " hold stale copies of master " + id
                                + " " + valuesOf(master));
                    }
                    staleHere += s;
                }
                stale += staleHere;
                if (staleHere > 0 && (master.get(FLAG) != null || movedOn(master))) {
                    inFlight += staleHere;
                }
                if (staleHere > 0) {
                    staleMasters++;
                    if (repair) {
                        repaired += updates.resync(master.get("_id"));
                    }
                }
            }
        }
        if (stale > inFlight) {
            // copies of unflagged masters: nothing in flight will bring them back
            LOG.warn("[{}] verify found {} drifted copies ({} stale in all, of {} masters){}", config.name(),
                    stale - inFlight, stale, staleMasters, repair ? "; repaired " + repaired : "");
        } else if (stale > 0) {
            LOG.debug("[{}] verify found {} copies behind a propagation in flight{}", config.name(), stale,
                    repair ? "; repaired " + repaired : "");
        }
        return new SyncVerification(config.name(), masterCount, copies, stale, staleMasters, inFlight, repaired,
                samples,
                Duration.ofNanos(System.nanoTime() - start));
    }

    /**
     * Whether {@code master} has been updated since it was read: its copies were compared with a value an update in
     * flight has replaced, so what differs is that update's propagation, not drift.
     */
    boolean movedOn(Document master) {
        Document now = store.versionAndFlag(master.get("_id"));
        return now == null || now.get(FLAG) != null || !java.util.Objects.equals(now.get(VERSION),
                master.get(VERSION));
    }

    Bson staleCopies(SyncTarget target, Document master) {
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

    Map<String, Object> valuesOf(Document master) {
        Map<String, Object> values = new LinkedHashMap<>();
        for (String field : config.masterFields()) {
            Value value = valueAt(master, field);
            values.put(field, value.present() ? value.value() : "(missing)");
        }
        return values;
    }

    /**
     * The master {@code id} (its flag is the operation in flight) and its copies in every target, as stored (a reader
     * of a copy reads it as stored), each noted current or stale; at most {@link #DESCRIBED_COPIES} per target.
     */
    @Override
    public Optional<OperationView> describe(Object id) {
        Document master = store.wholeMaster(id);
        if (master == null) {
            return Optional.empty();
        }
        List<OperationView.Touched> touched = new ArrayList<>();
        for (SyncTarget target : store.targets()) {
            Set<Object> stale = new java.util.HashSet<>();
            store.findIn(target, staleCopies(target, master), Projections.include("_id"), DESCRIBED_COPIES)
                    .forEach(d -> stale.add(Ids.idKey(d.get("_id"))));
            for (Document copy : store.findIn(target, eq(target.path(target.idField()), id), null,
                    DESCRIBED_COPIES)) {
                touched.add(new OperationView.Touched(target.collection(), copy.get("_id"), copy,
                        stale.contains(Ids.idKey(copy.get("_id"))) ? "stale copy: not yet propagated"
                                : "current copy"));
            }
        }
        return Optional.of(new OperationView(id, master.get(FLAG) == null ? "synced" : "flagged", master, touched));
    }

    /** The most copies per target {@link #describe} reads. */
    static final int DESCRIBED_COPIES = 20;

    /** Masters whose flag is older than {@code staleAfter}: propagations that did not finish, oldest first. */
    @Override
    public List<InterruptedOperation> interrupted(Duration staleAfter, int limit) {
        Bson stale = staleAfter.isZero() ? exists(FLAG_AT) : lte(FLAG_AT, clock.cutoff(staleAfter));
        List<InterruptedOperation> out = new ArrayList<>();
        for (Document master : store.oldestFlagged(stale, limit)) {
            Document flag = master.get(FLAG, Document.class);
            out.add(new InterruptedOperation(master.get("_id"), "flagged", clock.ageOf(flag.getDate("at")
                    .toInstant()),
                    config.masterCollection() + ", update " + flag.get("op")));
        }
        return out;
    }

    /** Operations by state, from the masters' remembered operations and their flags. */
    @Override
    public StrategyStatus status() {
        long flagged = store.countFlagged();
        Document oldest = store.oldestFlagged(exists(FLAG_AT), 1).stream().findFirst().orElse(null);
        Optional<Duration> age = Optional.ofNullable(oldest)
                .map(d -> d.get(FLAG, Document.class).getDate("at"))
                .map(at -> clock.ageOf(at.toInstant()));
        long ops = store.countRemembered();
        Map<String, Long> counts = new HashMap<>();
        counts.put(SYNCING, flagged);
        counts.put(SYNCED, Math.max(0, ops - flagged));
        return new StrategyStatus(config.name(), counts, flagged, age);
    }

    /** The counters since this instance was built. */
    @Override
    public SyncFlagMetrics metrics() {
        return counters.read();
    }
}
