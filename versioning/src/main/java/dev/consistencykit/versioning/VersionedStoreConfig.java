package dev.consistencykit.versioning;

import java.time.Duration;


import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.StrategyConfig;

/**
 * The settings of a {@link VersionedStore}, written only by {@link VersionedStore.Builder} (from
 * {@link VersionedStore#builder}, or from an existing configuration with {@code Builder.from}),
 * which hands each instance its own copy: an instance's configuration never changes.
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

    String rootsCollection = DEFAULT_ROOTS_COLLECTION;
    String itemsCollection = DEFAULT_ITEMS_COLLECTION;
    String historyCollection = DEFAULT_HISTORY_COLLECTION;
    Duration staleAfter = DEFAULT_STALE_AFTER;
    int settleThreshold = DEFAULT_SETTLE_THRESHOLD;
    Retention retention = Retention.KEEP_ALL;
    int conflictAttempts = DEFAULT_CONFLICT_ATTEMPTS;

    VersionedStoreConfig() {
        super(DEFAULT_NAME);
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
    @Override
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
    protected void checkCombination() {
        if (rootsCollection.equals(itemsCollection) || rootsCollection.equals(historyCollection)
                || itemsCollection.equals(historyCollection)) {
            throw new IllegalStateException("the roots, items and history collections must differ");
        }
    }
}
