package dev.consistencykit.versioning;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.Checks;
import dev.consistencykit.core.Names;
import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.StrategyConfig;

/**
 * The immutable settings of a {@link VersionedStore}; built only by {@link VersionedStore.Builder}
 * (from {@link VersionedStore#builder}, or from an existing configuration with {@link #toBuilder} or
 * {@link VersionedStore.Builder#from}), so that a new setting never breaks a caller.
 *
 * <p>Defaults: name {@value #DEFAULT_NAME}; roots in {@value #DEFAULT_ROOTS_COLLECTION}, item versions in
 * {@value #DEFAULT_ITEMS_COLLECTION}, one record per settled version in {@value #DEFAULT_HISTORY_COLLECTION};
 * recovery takes over a change set staged for 30 s ({@link #DEFAULT_STALE_AFTER}); a writer settles its root itself
 * once {@value #DEFAULT_SETTLE_THRESHOLD} versions are unsettled; {@link Retention#KEEP_ALL};
 * {@link VersionedStore#update} tries {@value #DEFAULT_CONFLICT_ATTEMPTS} times; {@link RetryPolicy#DEFAULT}; the system
 * clock.
 */
public final class VersionedStoreConfig extends StrategyConfig {

    /** Default name: {@value}. */
    public static final String DEFAULT_NAME = "versioning";
    /** Default roots collection: {@value}. */
    public static final String DEFAULT_ROOTS_COLLECTION = "versionRoots";
    /** Default item versions collection: {@value}. */
    public static final String DEFAULT_ITEMS_COLLECTION = "versionItems";
    /** Default history collection: {@value}. */
    public static final String DEFAULT_HISTORY_COLLECTION = "versionHistory";
    /** Default staleness before recovery takes a staged change set over: 30 s. */
    public static final Duration DEFAULT_STALE_AFTER = Duration.ofSeconds(30);
    /** Default unsettled versions at which a writer settles its root: {@value}. */
    public static final int DEFAULT_SETTLE_THRESHOLD = 64;
    /** Default attempts of {@link VersionedStore#update}: {@value}. */
    public static final int DEFAULT_CONFLICT_ATTEMPTS = 10;

    private final String rootsCollection;
    private final String itemsCollection;
    private final String historyCollection;
    private final Duration staleAfter;
    private final int settleThreshold;
    private final Retention retention;
    private final int conflictAttempts;

    /**
     * @throws NullPointerException     for a null setting
     * @throws IllegalArgumentException for a value out of range
     * @throws IllegalStateException    if two collections have the same name
     */
    VersionedStoreConfig(String name, String rootsCollection, String itemsCollection, String historyCollection,
            Duration staleAfter, int settleThreshold, Retention retention, int conflictAttempts,
            RetryPolicy retryPolicy, Clock clock) {
        super(name, retryPolicy, clock);
        Names.fieldName(name, "rootsCollection", rootsCollection);
        Names.fieldName(name, "itemsCollection", itemsCollection);
        Names.fieldName(name, "historyCollection", historyCollection);
        Checks.positive("staleAfter", staleAfter);
        Checks.atLeast("settleThreshold", settleThreshold, 1);
        Objects.requireNonNull(retention, "retention");
        Checks.atLeast("conflictAttempts", conflictAttempts, 1);
        if (rootsCollection.equals(itemsCollection) || rootsCollection.equals(historyCollection)
                || itemsCollection.equals(historyCollection)) {
            throw new IllegalStateException("the roots, items and history collections must differ");
        }
        this.rootsCollection = rootsCollection;
        this.itemsCollection = itemsCollection;
        this.historyCollection = historyCollection;
        this.staleAfter = staleAfter;
        this.settleThreshold = settleThreshold;
        this.retention = retention;
        this.conflictAttempts = conflictAttempts;
    }

    /**
     * A builder of a new instance on {@code database} with every setting of this one.
     *
     * @param database the database the new instance works on
     */
    public VersionedStore.Builder toBuilder(MongoDatabase database) {
        return VersionedStore.builder(database).from(this);
    }

    /** Returns the roots: committed version, staged and unsettled attempts. */
    public String rootsCollection() {
        return rootsCollection;
    }

    /** Returns the item versions. */
    public String itemsCollection() {
        return itemsCollection;
    }

    /** Returns one record per settled version (change set, time, meta). */
    public String historyCollection() {
        return historyCollection;
    }

    /** Returns how long a change set stays staged before {@link VersionedStore#recover()} takes it over. */
    public Duration staleAfter() {
        return staleAfter;
    }

    /** Returns unsettled versions on a root at which the committing writer settles them. */
    public int settleThreshold() {
        return settleThreshold;
    }

    /** Returns what {@link VersionedStore#prune()} keeps. */
    public Retention retention() {
        return retention;
    }

    /** Returns attempts of {@link VersionedStore#update} before it gives up on conflicts. */
    public int conflictAttempts() {
        return conflictAttempts;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof VersionedStoreConfig o && sharesSettingsWith(o)
                && rootsCollection.equals(o.rootsCollection)
                && itemsCollection.equals(o.itemsCollection)
                && historyCollection.equals(o.historyCollection)
                && staleAfter.equals(o.staleAfter)
                && settleThreshold == o.settleThreshold
                && retention.equals(o.retention)
                && conflictAttempts == o.conflictAttempts;
    }

    @Override
    public int hashCode() {
        return 31 * sharedHashCode() + Objects.hash(rootsCollection, itemsCollection, historyCollection, staleAfter,
                settleThreshold, retention, conflictAttempts);
    }

    @Override
    public String toString() {
        return describe("rootsCollection=" + rootsCollection + ", "
                + "itemsCollection=" + itemsCollection + ", "
                + "historyCollection=" + historyCollection + ", "
                + "staleAfter=" + staleAfter + ", "
                + "settleThreshold=" + settleThreshold + ", "
                + "retention=" + retention + ", "
                + "conflictAttempts=" + conflictAttempts);
    }
}
