package dev.consistencykit.syncflag;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.Guarantees;
import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.MaintenanceStep;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.OutcomeUnknownException;
import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyBuilder;
import dev.consistencykit.core.StrategyEntry;
import dev.consistencykit.core.spi.Calls;
import dev.consistencykit.core.spi.Checks;
import dev.consistencykit.core.spi.Names;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.syncflag.internal.SyncAudit;
import dev.consistencykit.syncflag.internal.SyncParts;
import dev.consistencykit.syncflag.internal.SyncRecovery;
import dev.consistencykit.syncflag.internal.SyncStore;
import dev.consistencykit.syncflag.internal.SyncUpdates;

/**
 * Keeps denormalized copies of a master document's fields in step with the master: a user renames themself, and
 * every comment and post carrying the author's name follows — and is repaired by a sweeper after any crash.
 *
 * <p><b>How.</b> {@link #update} applies the caller's update to the master in one atomic write that also increments
 * the master's {@code syncVersion} and sets its {@code syncing} flag; then one {@code updateMany} per target writes the
 * master's current values, with that version, to every copy whose version is lower; then the flag is cleared if it is
 * still this update's. {@link #recover()} finds flags older than {@link SyncFlagConfig#staleAfter()} by index (server
 * time), takes each over with one compare-and-set, and propagates again. An update that cannot change a copied field
 * (by its operators' field paths) costs one write and sets no flag.
 *
 * <p><b>What it guarantees.</b> The master change is atomic and durable at once; every copy reaches the master's latest
 * value once the last update's propagation, a sweep or a read repair finishes; copies only move forward (a copy
 * written from version <i>n</i> is never overwritten from an older version), so concurrent and repeated updates,
 * concurrent sweepers and a paused writer that wakes up late all converge on the latest value. Safety never depends
 * on clocks; the threshold only decides when the sweeper takes over.
 *
 * <p><b>What a reader may see.</b> While a propagation is in flight, a copy may still hold the previous value (each
 * target document changes atomically on its own), and copies in different documents may differ from each other for
 * that moment. A reader that needs the latest value reads the master; one that sees the flag can call
 * {@link #readRepair(Document)}.
 *
 * <p>Thread-safe; any number of instances in any number of processes may share the collections.
 *
 * <pre>{@code
 * SyncFlag sync = SyncFlag.builder(db)
 *         .master("users", "name")
 *         .target(SyncTarget.in("comments", "authorId").copy("name", "authorName"))
 *         .target(SyncTarget.in("posts", "authorId").inArray("comments").copy("name", "authorName"))
 *         .build();
 * sync.ensureIndexes();
 * sync.update("ann", Updates.set("name", "Ann Smith"));   // master, then every copy
 * sync.recover();                                         // periodically: repairs after crashes
 * }</pre>
 */
public final class SyncFlag extends StrategyEntry<MasterUpdate, SyncFlagConfig, SyncFlagMetrics> {

    private static final Logger LOG = LoggerFactory.getLogger(SyncFlag.class);

    /** The boundary of the static helpers, which have no instance: default retry and timeout. */
    private static final Calls STATIC_CALLS = new Calls(SyncFlagConfig.DEFAULT_NAME, RetryPolicy.DEFAULT,
            Calls.DEFAULT_OPERATION_TIMEOUT);
    private final SyncUpdates updates;
    private final SyncRecovery recovery;
    private final SyncAudit audit;

    private SyncFlag(SyncFlagConfig config, Calls calls, SyncParts parts) {
        super(config, calls, parts.store(), parts.recovery(), parts.audit());
        this.updates = parts.updates();
        this.recovery = parts.recovery();
        this.audit = parts.audit();
    }

    /** A builder for a sync flag on {@code database}. */
    public static Builder builder(MongoDatabase database) {
        return new Builder(database);
    }

    /**
     * Builders for every sync flag whose {@link #ensureIndexes()} ran on {@code database}, set up with the master,
     * targets and staleness it recorded in {@value SyncFlagConfig#REGISTRY_COLLECTION}: what an operator's tool uses to
     * inspect and recover them without the application's code. Listeners, clocks and retry policies are not recorded.
     */
    public static List<Builder> registered(MongoDatabase database) {
        List<Builder> builders = new ArrayList<>();
        for (Document entry : STATIC_CALLS.idempotent("list registered instances",
                () -> SyncStore.registered(database.getTimeout(TimeUnit.MILLISECONDS) != null ? database
                        : database.withTimeout(Calls.DEFAULT_OPERATION_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)))) {
            // the registry is a collection like any other: an entry this class did not write is skipped, not obeyed
            try {
                builders.add(registeredBuilder(database, entry));
            } catch (ClassCastException | NullPointerException | IllegalArgumentException
                     | ConsistencyException e) {
                LOG.warn("skipping registry entry {}: {}", Values.show(entry.get("_id")), e.toString());
            }
        }
        return builders;
    }

    private static Builder registeredBuilder(MongoDatabase database, Document entry) {
        Builder b = builder(database).name(entry.getString("_id"))
                .master(entry.getString("master"), entry.getList("fields", String.class).toArray(new String[0]))
                .staleAfter(Duration.ofMillis(entry.get("staleAfterMillis", Number.class).longValue()));
        for (Document t : entry.getList("targets", Document.class)) {
            SyncTarget target = SyncTarget.in(t.getString("collection"), t.getString("idField"))
                    .versionField(t.getString("versionField"));
            if (t.getString("arrayField") != null) {
                target = target.inArray(t.getString("arrayField"));
            }
            for (List<?> copy : t.getList("copies", List.class)) {
                target = target.copy((String) copy.get(0), (String) copy.get(1));
            }
            b.target(target);
        }
        return b;
    }

    /**
     * Applies the update to the master and flags it (one atomic write) without propagating; the sweeper, a read
     * repair or a later {@link #apply} of the same id propagates.
     *
     * @throws InvalidInputException        if the master id or the update is invalid (nothing is written)
     * @throws MasterMissingException       if the master does not exist (nothing is written)
     * @throws UpdateRejectedException      if the server refuses the update (nothing is written)
     * @throws IdempotencyConflictException if the master already applied this id with another update
     */
    @Override
    public OperationId submit(MasterUpdate change) {
        SyncUpdates.Prepared p = updates.prepare(change);
        return calls.operation("submit", change.id().value(), () -> updates.submit(p));
    }

    /**
     * Applies the update to the master and propagates it to every copy in this thread. Idempotent for a
     * caller-supplied id: a repeat propagates if the flag is still there and otherwise does nothing.
     *
     * @return committed: the master carries the update and its copies are in step, or a newer update's propagation
     *         carries them
     * @throws InvalidInputException        if the master id or the update is invalid (nothing is written)
     * @throws MasterMissingException       if the master does not exist (nothing is written)
     * @throws UpdateRejectedException      if the server refuses the update (nothing is written)
     * @throws IdempotencyConflictException if the master already applied this id with another update
     * @throws OutcomeUnknownException      if the server stopped answering; the flag stays for the sweeper
     */
    @Override
    public OperationResult apply(MasterUpdate change) {
        SyncUpdates.Prepared p = updates.prepare(change);
        return calls.operation("apply", change.id().value(), () -> updates.apply(p));
    }

    /** {@link #apply} of {@code update} to master {@code masterId}, with a random operation id. */
    public OperationResult update(Object masterId, Bson update) {
        return apply(MasterUpdate.of(masterId, update));
    }

    /**
     * Propagates master {@code masterId}'s current values again, under a new version: for a master changed behind
     * the module's back. Returns the number of target documents written.
     *
     * @throws MasterMissingException if the master does not exist
     */
    public long resync(Object masterId) {
        return calls.operation("resync", null, () -> updates.resync(masterId));
    }

    /**
     * Read repair: a reader that read {@code master} (with its {@code syncing} field) and saw the flag calls this to
     * propagate now rather than wait for the sweeper. Of several readers of the same flag, one propagates.
     *
     * @return whether this call propagated
     */
    public boolean readRepair(Document master) {
        return calls.operation("read repair", null, () -> recovery.readRepair(master));
    }

    /**
     * Compares every copy of every master with its master's current value (for adopting the module on existing data,
     * or auditing it), and with {@code repair} resyncs every master with stale copies. Reads every master and counts
     * copies per master and target: a full pass, for maintenance windows. A master whose propagation is in flight may
     * show stale copies that are about to be written.
     */
    public SyncVerification verify(boolean repair) {
        return calls.idempotent("verify", () -> audit.verify(repair));
    }

    /** The sweeper every 10 s: flags older than {@code staleAfter} are propagated. */
    @Override
    public List<MaintenanceStep> maintenance() {
        return List.of(MaintenanceStep.of(name() + " recover", Duration.ofSeconds(10), this::recover));
    }

    @Override
    public Guarantees guarantees() {
        return new Guarantees(
                "the master change is atomic (one write); copies follow, each target document atomically",
                "a copy may show the previous value until propagation reaches it; never an older one after a newer",
                "copies converge to the master's latest value; a copy never moves back to an older version",
                "a sweeper finds flags older than a threshold by index and propagates the master's current value");
    }

    /**
     * Builds a {@link SyncFlag}. Setters check their argument; {@link #build()} checks the spec as a whole.
     */
    public static final class Builder extends SyncFlagConfig.Settings<Builder> {

        private SyncFlagListener listener = new SyncFlagListener() { };

        private Builder(MongoDatabase database) {
            super(database);
        }

        /** Hooks called as masters change and copies follow. */
        public Builder listener(SyncFlagListener value) {
            this.listener = Objects.requireNonNull(value, "listener");
            return this;
        }

        /**
         * Builds the instance. Sends nothing to the server.
         *
         * @throws InvalidInputException                            for a spec that is wrong (see {@link SyncFlagConfig})
         * @throws IllegalStateException                            if no master was set
         * @throws dev.consistencykit.core.UnsafeConfigurationException if the database's write concern is {@code w:0}
         */
        public SyncFlag build() {
            if (config.masterCollection == null) {
                throw new IllegalStateException("no master: call master(collection, fields...)");
            }
            MongoDatabase db = acknowledgedDatabase();
            SyncFlagConfig built = builtConfig();
            ServerClock time = serverClockFor(db, built);
            return new SyncFlag(built, calls(built), SyncParts.of(built, db, time, listener));
        }
    }
}
