package dev.consistencykit.versioning;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;

import dev.consistencykit.core.Checks;
import dev.consistencykit.core.Inputs;
import dev.consistencykit.core.RetryPolicy;

/**
 * The immutable settings of a {@link VersionedStore}; built by {@link VersionedStore.Builder}.
 *
 * <p>Defaults: name {@value #DEFAULT_NAME}; roots in {@value #DEFAULT_ROOTS_COLLECTION}, item versions in
 * {@value #DEFAULT_ITEMS_COLLECTION}, one record per settled version in {@value #DEFAULT_HISTORY_COLLECTION};
 * recovery takes over a change set staged for 30 s ({@link #DEFAULT_STALE_AFTER}); a writer settles its root itself
 * once {@value #DEFAULT_SETTLE_THRESHOLD} versions are unsettled; {@link Retention#KEEP_ALL};
 * {@link VersionedStore#update} tries {@value #DEFAULT_CONFLICT_ATTEMPTS} times; {@link RetryPolicy#DEFAULT}; the system
 * clock.
 *
 * @param name               the instance name
 * @param rootsCollection    the roots: committed version, staged and unsettled attempts
 * @param itemsCollection    the item versions
 * @param historyCollection  one record per settled version (change set, time, meta)
 * @param staleAfter         how long a change set stays staged before {@link VersionedStore#recover()} takes it over
 * @param settleThreshold    unsettled versions on a root at which the committing writer settles them
 * @param retention          what {@link VersionedStore#prune()} keeps
 * @param conflictAttempts   attempts of {@link VersionedStore#update} before it gives up on conflicts
 * @param retryPolicy        retry of transient errors
 * @param clock              the local clock server time is estimated from
 */
public record VersionedStoreConfig(String name, String rootsCollection, String itemsCollection,
                                   String historyCollection, Duration staleAfter, int settleThreshold,
                                   Retention retention, int conflictAttempts, RetryPolicy retryPolicy, Clock clock) {

    /** Default name: {@value}. */
    public static final String DEFAULT_NAME = "versions";
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

    /**
     * @throws NullPointerException     for a null setting
     * @throws IllegalArgumentException for a value out of range
     * @throws IllegalStateException    if two collections have the same name
     */
    public VersionedStoreConfig {
        Objects.requireNonNull(name, "name");
        Inputs.fieldName(name, "rootsCollection", rootsCollection);
        Inputs.fieldName(name, "itemsCollection", itemsCollection);
        Inputs.fieldName(name, "historyCollection", historyCollection);
        Objects.requireNonNull(staleAfter, "staleAfter");
        Checks.positive("staleAfter", staleAfter);
        Checks.atLeast("settleThreshold", settleThreshold, 1);
        Objects.requireNonNull(retention, "retention");
        Checks.atLeast("conflictAttempts", conflictAttempts, 1);
        Objects.requireNonNull(retryPolicy, "retryPolicy");
        Objects.requireNonNull(clock, "clock");
        if (rootsCollection.equals(itemsCollection) || rootsCollection.equals(historyCollection)
                || itemsCollection.equals(historyCollection)) {
            throw new IllegalStateException("the roots, items and history collections must differ");
        }
    }
}
