package dev.consistencykit.versioning;

import java.time.Duration;
import java.util.Objects;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.StrategyBuilder;
import dev.consistencykit.core.StrategyConfig;
import dev.consistencykit.core.spi.Checks;
import dev.consistencykit.core.spi.Names;

/**
 * The settings of a {@link VersionedStore}, written only by {@link VersionedStore.Builder} (from
 * {@link VersionedStore#builder}, or from an existing configuration with {@code Builder.from}),
 * which hands each instance its own copy: an instance's configuration never changes.
 *
 * <p>Defaults: name {@value #DEFAULT_NAME}; roots in {@value #DEFAULT_ROOTS_COLLECTION}, item versions in
 * {@value #DEFAULT_ITEMS_COLLECTION}, one record per settled version in {@value #DEFAULT_HISTORY_COLLECTION};
 * recovery takes over a change set staged for 30 s ({@link #DEFAULT_STALE_AFTER}); a writer settles its root itself
 * once {@value #DEFAULT_SETTLE_THRESHOLD} versions are unsettled; {@link Retention#KEEP_ALL};
 * {@link VersionedStore#update} tries {@value #DEFAULT_CONFLICT_ATTEMPTS} times; a root carries its tree while it fits
 * in 64 KiB ({@link #DEFAULT_INLINE_TREE_BYTES}); {@link RetryPolicy#DEFAULT}; the system clock.
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
    /** Default bytes of a tree, with what its last commit replaced, that its root carries whole: {@value} (64 KiB). */
    public static final int DEFAULT_INLINE_TREE_BYTES = 64 * 1024;
    /** The most bytes {@link #inlineTreeBytes()} may be: {@value} (1 MiB of a root's 16 MiB). */
    public static final int MAX_INLINE_TREE_BYTES = 1024 * 1024;

    String rootsCollection = DEFAULT_ROOTS_COLLECTION;
    String itemsCollection = DEFAULT_ITEMS_COLLECTION;
    String historyCollection = DEFAULT_HISTORY_COLLECTION;
    Duration staleAfter = DEFAULT_STALE_AFTER;
    int settleThreshold = DEFAULT_SETTLE_THRESHOLD;
    Retention retention = Retention.KEEP_ALL;
    int conflictAttempts = DEFAULT_CONFLICT_ATTEMPTS;
    int inlineTreeBytes = DEFAULT_INLINE_TREE_BYTES;

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

    /**
     * Returns the most bytes of a tree, with what its last commit replaced, that the root carries whole, so that a
     * read of the current version, of the one before it, or of one item in it is one document read by {@code _id}.
     * Zero: roots carry no tree, and every read is the aggregation over item versions.
     */
    public int inlineTreeBytes() {
        return inlineTreeBytes;
    }

    @Override
    protected void checkCombination() {
        if (rootsCollection.equals(itemsCollection) || rootsCollection.equals(historyCollection)
                || itemsCollection.equals(historyCollection)) {
            throw new IllegalStateException("the roots, items and history collections must differ");
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
    public abstract static class Settings<B extends Settings<B>> extends StrategyBuilder<B, VersionedStoreConfig> {

        /** Settings for an instance on {@code database}, every one at its default. */
        protected Settings(MongoDatabase database) {
            super(database, DEFAULT_NAME, VersionedStoreConfig::new);
        }

        /** The collection of roots (default {@value VersionedStoreConfig#DEFAULT_ROOTS_COLLECTION}). */
        public B rootsCollection(String value) {
            config.rootsCollection = Names.fieldName(config.name(), "rootsCollection", value);
            return self();
        }

        /** The collection of item versions (default {@value VersionedStoreConfig#DEFAULT_ITEMS_COLLECTION}). */
        public B itemsCollection(String value) {
            config.itemsCollection = Names.fieldName(config.name(), "itemsCollection", value);
            return self();
        }

        /** The collection of version records (default {@value VersionedStoreConfig#DEFAULT_HISTORY_COLLECTION}). */
        public B historyCollection(String value) {
            config.historyCollection = Names.fieldName(config.name(), "historyCollection", value);
            return self();
        }

        /**
         * The three collections at once: {@link #rootsCollection}, {@link #itemsCollection}, {@link #historyCollection}.
         */
        public B collections(String roots, String items, String history) {
            return rootsCollection(roots).itemsCollection(items).historyCollection(history);
        }

        /**
         * How long a change set stays staged before {@link VersionedStore#recover()} takes it over. Default 30 s.
         *
         * @throws IllegalArgumentException if zero or negative
         */
        public B staleAfter(Duration value) {
            config.staleAfter = Checks.positive("staleAfter", value);
            return self();
        }

        /**
         * Unsettled versions at which a committing writer settles its root. Default
         * {@value VersionedStoreConfig#DEFAULT_SETTLE_THRESHOLD}.
         *
         * @throws IllegalArgumentException if below 1
         */
        public B settleThreshold(int value) {
            config.settleThreshold = Checks.atLeast("settleThreshold", value, 1);
            return self();
        }

        /** What {@link VersionedStore#prune()} keeps. Default {@link Retention#KEEP_ALL}. */
        public B retention(Retention value) {
            config.retention = Objects.requireNonNull(value, "retention");
            return self();
        }

        /**
         * Attempts of {@link VersionedStore#update} before it gives up. Default
         * {@value VersionedStoreConfig#DEFAULT_CONFLICT_ATTEMPTS}.
         *
         * @throws IllegalArgumentException if below 1
         */
        public B conflictAttempts(int value) {
            config.conflictAttempts = Checks.atLeast("conflictAttempts", value, 1);
            return self();
        }

        /**
         * The most bytes of a tree, with what its last commit replaced, that its root carries whole. Default
         * {@value VersionedStoreConfig#DEFAULT_INLINE_TREE_BYTES}; zero turns it off.
         *
         * @throws IllegalArgumentException if negative or above
         *                                  {@value VersionedStoreConfig#MAX_INLINE_TREE_BYTES}
         */
        public B inlineTreeBytes(int value) {
            if (value < 0 || value > MAX_INLINE_TREE_BYTES) {
                throw new IllegalArgumentException("inlineTreeBytes must be between 0 and " + MAX_INLINE_TREE_BYTES
                        + ", was " + value);
            }
            config.inlineTreeBytes = value;
            return self();
        }
    }
}
