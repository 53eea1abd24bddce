package dev.consistencykit.syncflag.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.lte;
import static dev.consistencykit.syncflag.internal.SyncSchema.FLAG;
import static dev.consistencykit.syncflag.internal.SyncSchema.FLAG_AT;
import static dev.consistencykit.syncflag.internal.SyncSchema.FLAG_OP;

import java.time.Duration;
import java.util.Date;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;

import org.bson.Document;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.client.MongoCursor;

import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.Passes;
import dev.consistencykit.core.spi.PatternRecovery;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.syncflag.SyncFlagConfig;
import dev.consistencykit.syncflag.SyncFlagListener.Source;

/**
 * Recovery: the sweeper's take-over of stale flags, and read repair.
 */
public final class SyncRecovery implements PatternRecovery {

    private static final Logger LOG = LoggerFactory.getLogger(SyncRecovery.class);

    private final SyncFlagConfig config;
    private final SyncStore store;
    private final SyncPropagation propagation;
    private final SyncCounters counters;
    private final ServerClock clock;

    SyncRecovery(SyncFlagConfig config, SyncStore store, SyncPropagation propagation, SyncCounters counters,
                 ServerClock clock) {
        this.config = config;
        this.store = store;
        this.propagation = propagation;
        this.counters = counters;
        this.clock = clock;
    }

    /** The sweeper's pass: {@link #sweep} of every flag older than {@code staleAfter}. */
    @Override
    public RecoveryReport recover(Duration staleAfter) {
        return sweep(staleAfter, Source.SWEEP, null);
    }

    /** {@link #recover(Duration)} of the master {@code id} alone. */
    @Override
    public RecoveryReport recoverOne(Object id, Duration staleAfter) {
        return sweep(staleAfter, Source.SWEEP, id);
    }

    /**
     * Takes over every flag older than {@code staleAfter} (server time) and propagates its master; zero takes over
     * every flag.
     */
    public RecoveryReport sweep(Duration staleAfter, Source source) {
        return sweep(staleAfter, source, null);
    }

    /** {@link #sweep(Duration, Source)} of the master {@code only} alone when it is not {@code null} (checked). */
    public RecoveryReport sweep(Duration staleAfter, Source source, Object only) {
        long start = System.nanoTime();
        Bson flagged = staleAfter.isZero() ? exists(FLAG_AT) : lte(FLAG_AT, clock.cutoff(staleAfter));
        Bson stale = only == null ? flagged : and(eq("_id", only), flagged);
        Set<Object> seen = new HashSet<>();
        int examined = 0;
        int forward = 0;
        int skipped = 0;
        // one cursor in flag-time order; a flag taken over gets a fresh time and may come by again later in the same
        // cursor, hence the seen set
        try (MongoCursor<Document> cursor = store.flagged(stale, config.sweepBatch())) {
            while (cursor.hasNext()) {
                Document found = cursor.next();
                if (!seen.add(found.get("_id"))) {
                    continue;
                }
                examined++;
                Document flag = found.get(FLAG, Document.class);
                if (Passes.orLeftToNextPass(config.name(), "sweep: master " + Values.show(found.get("_id")),
                        false, () -> takeOver(found.get("_id"), eq(FLAG_OP, flag.get("op")), stale, source))) {
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
        Object id = Ids.documentId(config.name(), "master._id", master.get("_id"), store.codecs());
        Object op = Ids.operationId(config.name(), "master." + FLAG + ".op", flag.get("op"));
        // the flag as the reader saw it: not refreshed since (a take-over stamps a later time). Compared below the
        // next millisecond rather than for equality, because a stored time may carry more precision than the
        // millisecond a reader gets back (the embedded server keeps the server's full clock precision)
        Bson seen = flag.get("at") instanceof Date at ? lt(FLAG_AT, new Date(at.getTime() + 1)) : exists(FLAG_AT);
        return takeOver(id, new Document(FLAG_OP, new Document("$eq", op)), seen, Source.READ_REPAIR);
    }

    boolean takeOver(Object masterId, Bson sameOp, Bson condition, Source source) {
        // refreshing the flag's time is the claim: other sweepers now see a fresh flag and leave it; the operation id
        // stays, so the update's own process can still clear it when it finishes
        Document claimed = store.takeOverFlag(masterId, sameOp, condition);
        if (claimed == null) {
            return false;
        }
        counters.flagsTakenOver.increment();
        propagation.propagate(claimed, source);
        return true;
    }
}
