package dev.consistencykit.syncflag;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.StrategyBuilder;
import dev.consistencykit.core.StrategyConfig;
import dev.consistencykit.core.spi.Checks;
import dev.consistencykit.core.spi.Names;

/**
 * The settings of a {@link SyncFlag}, written only by {@link SyncFlag.Builder} (from {@link SyncFlag#builder},
 * or from an existing configuration with {@code Builder.from}), which hands each instance its
 * own copy: an instance's configuration never changes.
 *
 * <p>Defaults: name {@value #DEFAULT_NAME}; the sweeper takes over flags older than 60 s ({@link #DEFAULT_STALE_AFTER});
 * each master remembers the ids of its last {@value #DEFAULT_REMEMBERED_UPDATES} updates; the sweeper reads
 * {@value #DEFAULT_SWEEP_BATCH} flagged masters per query; {@link RetryPolicy#DEFAULT} for transient errors; the system
 * clock.
 *
 * <p>Fields the module keeps in master documents (an update must not touch them): {@value #FLAG_FIELD} (the flag:
 * {@code {op, at}}), {@value #VERSION_FIELD} (a counter of propagated changes) and {@value #OPS_FIELD} (the last
 * operation ids, for idempotency).
 */
public final class SyncFlagConfig extends StrategyConfig {

    /** Default name: {@value}. */
    public static final String DEFAULT_NAME = "sync-flag";
    /**
     * Where {@link SyncFlag#ensureIndexes()} records each instance's master and targets, by name, for
     * {@link SyncFlag#registered}: {@value}.
     */
    public static final String REGISTRY_COLLECTION = "syncFlagRegistry";
    /** Default staleness before the sweeper takes a flag over: 60 s. */
    public static final Duration DEFAULT_STALE_AFTER = Duration.ofSeconds(60);
    /** Default number of operation ids a master remembers: {@value}. */
    public static final int DEFAULT_REMEMBERED_UPDATES = 100;
    /** Default sweeper batch: {@value}. */
    public static final int DEFAULT_SWEEP_BATCH = 100;
    /** The flag in a master document: {@code {op: <operation id>, at: <server time>}}. */
    public static final String FLAG_FIELD = "syncing";
    /** The master's version counter, incremented by every update that may change a copied field. */
    public static final String VERSION_FIELD = "syncVersion";
    /** The master's recent operations: {@code [{id, h}]}, {@code h} a fingerprint of the update. */
    public static final String OPS_FIELD = "syncOps";

    /** Fields an update of a master must not touch. */
    public static final Set<String> RESERVED_FIELDS = Set.of("_id", FLAG_FIELD, VERSION_FIELD, OPS_FIELD);

    String masterCollection;
    List<String> masterFields = List.of();
    List<SyncTarget> targets = List.of();
    Duration staleAfter = DEFAULT_STALE_AFTER;
    int rememberedUpdates = DEFAULT_REMEMBERED_UPDATES;
    int sweepBatch = DEFAULT_SWEEP_BATCH;

    SyncFlagConfig() {
        super(DEFAULT_NAME);
    }

    /** Returns the collection of master documents. */
    public String masterCollection() {
        return masterCollection;
    }

    /** Returns the master fields that have copies. */
    public List<String> masterFields() {
        return masterFields;
    }

    /** Returns where the copies live. */
    public List<SyncTarget> targets() {
        return targets;
    }

    /**
     * Returns how old a flag must be before {@link SyncFlag#recover()} takes it over; must exceed the time a normal
     * propagation takes, or sweepers duplicate live work (never unsafe, only wasteful).
     */
    @Override
    public Duration staleAfter() {
        return staleAfter;
    }

    /** Returns how many recent operation ids a master keeps, for idempotent retries. */
    public int rememberedUpdates() {
        return rememberedUpdates;
    }

    /** Returns flagged masters read per sweeper query. */
    public int sweepBatch() {
        return sweepBatch;
    }

    /**
     * The spec as a whole.
     *
     * @throws IllegalStateException if no master was set
     * @throws InvalidInputException for a spec that is wrong: no master fields, a reserved or overlapping master
     *                               field, no targets, a target with no copies, a target copying a field the
     *                               master does not declare, two targets writing the same version field
     */
    @Override
    protected void checkCombination() {
        if (masterCollection == null) {
            throw new IllegalStateException("no master: call master(collection, fields...)");
        }
        if (masterFields.isEmpty()) {
            throw new InvalidInputException(name(), "masterFields", "no master fields: name the fields that have copies");
        }
        for (int i = 0; i < masterFields.size(); i++) {
            String field = masterFields.get(i);
            String top = field.split("\\.", 2)[0];
            if (RESERVED_FIELDS.contains(top)) {
                throw new InvalidInputException(name(), "masterFields", "master field '" + field
                        + "' is reserved (reserved: " + RESERVED_FIELDS + ")");
            }
            for (int j = 0; j < i; j++) {
                if (SyncTarget.overlaps(field, masterFields.get(j))) {
                    throw new InvalidInputException(name(), "masterFields", "master fields '" + masterFields.get(j)
                            + "' and '" + field + "' overlap");
                }
            }
        }
        if (targets.isEmpty()) {
            throw new InvalidInputException(name(), "targets", "no targets: add where the copies live");
        }
        Set<String> versionSlots = new HashSet<>();
        for (SyncTarget target : targets) {
            if (target.copies().isEmpty()) {
                throw new InvalidInputException(name(), "targets", "target " + target + " copies no field");
            }
            for (String from : target.copies().keySet()) {
                if (!masterFields.contains(from)) {
                    throw new InvalidInputException(name(), "targets", "target " + target.collection()
                            + " copies '" + from + "', which is not a master field of " + masterCollection
                            + " (master fields: " + masterFields + ")");
                }
            }
            String slot = target.collection() + " " + target.path(target.versionField());
            if (!versionSlots.add(slot)) {
                throw new InvalidInputException(name(), "targets", "two targets write the version field "
                        + target.path(target.versionField()) + " of " + target.collection()
                        + ": declare their copies on one target, or give one its own versionField");
            }
        }
    }

    /**
     * The setters of these settings, each checking its value; the entry type's builder inherits them and adds the
     * instance's parts (listener, handlers) and {@code build()}. A setting is a field with its default and a getter
     * above and its setter here: equality, {@code toString}, {@code Builder.from} and its Spring property (the
     * setter's name in kebab case) follow from them.
     *
     * @param <B> the entry type's builder
     */
    public abstract static class Settings<B extends Settings<B>> extends StrategyBuilder<B, SyncFlagConfig> {

        /** Settings for an instance on {@code database}, every one at its default. */
        protected Settings(MongoDatabase database) {
            super(database, DEFAULT_NAME, SyncFlagConfig::new);
        }

        /**
         * The master collection and the fields of it that have copies (dotted paths through subdocuments).
         *
         * @throws InvalidInputException for an invalid collection name or field path
         */
        public B master(String collection, String... fields) {
            Names.fieldName(config.name(), "masterCollection", collection);
            Objects.requireNonNull(fields, "fields");
            for (String field : fields) {
                Names.fieldPath(config.name(), "masterFields", field);
            }
            config.masterCollection = collection;
            config.masterFields = List.of(fields);
            return self();
        }

        /** Adds a target. */
        public B target(SyncTarget value) {
            List<SyncTarget> targets = new ArrayList<>(config.targets);
            targets.add(Objects.requireNonNull(value, "target"));
            config.targets = List.copyOf(targets);
            return self();
        }

        /**
         * How old a flag must be (by server time) before {@link SyncFlag#recover()} takes it over. Default 60 s.
         *
         * @throws IllegalArgumentException if zero or negative
         */
        public B staleAfter(Duration value) {
            config.staleAfter = Checks.positive("staleAfter", value);
            return self();
        }

        /**
         * How many recent operation ids each master remembers for idempotent retries. Default
         * {@value SyncFlagConfig#DEFAULT_REMEMBERED_UPDATES}.
         *
         * @throws IllegalArgumentException if below 1
         */
        public B rememberedUpdates(int value) {
            config.rememberedUpdates = Checks.atLeast("rememberedUpdates", value, 1);
            return self();
        }

        /**
         * Flagged masters the sweeper reads per query. Default {@value SyncFlagConfig#DEFAULT_SWEEP_BATCH}.
         *
         * @throws IllegalArgumentException if below 1
         */
        public B sweepBatch(int value) {
            config.sweepBatch = Checks.atLeast("sweepBatch", value, 1);
            return self();
        }
    }
}
