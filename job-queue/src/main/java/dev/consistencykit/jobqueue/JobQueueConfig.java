package dev.consistencykit.jobqueue;

import java.time.Duration;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.StrategyBuilder;
import dev.consistencykit.core.StrategyConfig;
import dev.consistencykit.core.spi.Checks;
import dev.consistencykit.core.spi.Names;

/**
 * The settings of a {@link JobQueue}, written only by {@link JobQueue.Builder} (from {@link JobQueue#builder}, or from
 * an existing configuration with {@code Builder.from}), which hands each instance its own copy.
 *
 * <p>Defaults: name {@value #DEFAULT_NAME}; jobs in {@value #DEFAULT_COLLECTION}, schedules in
 * {@value #DEFAULT_SCHEDULES_COLLECTION}, ordering keys in {@value #DEFAULT_KEYS_COLLECTION}; {@value #DEFAULT_MAX_ATTEMPTS}
 * attempts; a worker's lease of 30 s ({@link #DEFAULT_LEASE}); retry back-off from 1 s ({@link #DEFAULT_RETRY_BACKOFF})
 * doubling to at most 1 h ({@link #DEFAULT_MAX_RETRY_BACKOFF}) with ±50% jitter; done jobs kept 7 days
 * ({@link #DEFAULT_RETENTION}); {@code recover()} runs jobs due for 60 s ({@link #DEFAULT_STALE_AFTER}); an idle
 * worker looks for due jobs at least every 500 ms ({@link #DEFAULT_MAX_IDLE}); {@link RetryPolicy#DEFAULT} for
 * transient errors; the system clock.
 */
public final class JobQueueConfig extends StrategyConfig {

    /** Default name: {@value}. */
    public static final String DEFAULT_NAME = "job-queue";
    /** Default collection: {@value}. */
    public static final String DEFAULT_COLLECTION = "jobs";
    /** Default collection of recurring jobs' schedules: {@value}. */
    public static final String DEFAULT_SCHEDULES_COLLECTION = "jobSchedules";
    /** Default collection of ordering keys' lines: {@value}. */
    public static final String DEFAULT_KEYS_COLLECTION = "jobKeys";
    /** Default attempts: {@value}. */
    public static final int DEFAULT_MAX_ATTEMPTS = 5;
    /** Default lease: 30 s. */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
    /** Default first retry delay: 1 s. */
    public static final Duration DEFAULT_RETRY_BACKOFF = Duration.ofSeconds(1);
    /** Default longest retry delay: 1 h. */
    public static final Duration DEFAULT_MAX_RETRY_BACKOFF = Duration.ofHours(1);
    /** Default retention of done jobs: 7 days. */
    public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);
    /** Default longest wait of an idle worker between two looks for due jobs: 500 ms. */
    public static final Duration DEFAULT_MAX_IDLE = Duration.ofMillis(500);
    /** Default attempts kept in a job's history: {@value}. */
    public static final int DEFAULT_ATTEMPT_HISTORY = 10;
    /** The most attempts a job's history may keep: {@value}. */
    public static final int MAX_ATTEMPT_HISTORY = 100;
    /** Default of {@link #maxKeyBacklog()}. */
    public static final int DEFAULT_MAX_KEY_BACKLOG = 100_000;
    /**
     * The most {@link #maxKeyBacklog()} may be: recovery looks for a waiting job's entry across its line's chunks (of
     * 100 entries, about 7 kB) in one read.
     */
    public static final int MAX_KEY_BACKLOG = 150_000;
    /** Default staleness for {@code recover()}: 60 s. */
    public static final Duration DEFAULT_STALE_AFTER = Duration.ofSeconds(60);

    String collection = DEFAULT_COLLECTION;
    String schedulesCollection = DEFAULT_SCHEDULES_COLLECTION;
    String keysCollection = DEFAULT_KEYS_COLLECTION;
    int maxAttempts = DEFAULT_MAX_ATTEMPTS;
    Duration lease = DEFAULT_LEASE;
    Duration retryBackoff = DEFAULT_RETRY_BACKOFF;
    Duration maxRetryBackoff = DEFAULT_MAX_RETRY_BACKOFF;
    Duration retention = DEFAULT_RETENTION;
    Duration staleAfter = DEFAULT_STALE_AFTER;
    Duration maxIdle = DEFAULT_MAX_IDLE;
    int attemptHistory = DEFAULT_ATTEMPT_HISTORY;
    int maxKeyBacklog = DEFAULT_MAX_KEY_BACKLOG;

    JobQueueConfig() {
        super(DEFAULT_NAME);
    }

    /** Returns the jobs collection. */
    public String collection() {
        return collection;
    }

    /** Returns the collection of recurring jobs' schedules. */
    public String schedulesCollection() {
        return schedulesCollection;
    }

    /** Returns the collection of ordering keys' lines. */
    public String keysCollection() {
        return keysCollection;
    }

    /** Returns attempts before a job goes dead, unless the job says otherwise. */
    public int maxAttempts() {
        return maxAttempts;
    }

    /** Returns how long a worker holds a claimed job without a heartbeat. */
    public Duration lease() {
        return lease;
    }

    /** Returns the delay before the second attempt. */
    public Duration retryBackoff() {
        return retryBackoff;
    }

    /** Returns the longest delay between attempts. */
    public Duration maxRetryBackoff() {
        return maxRetryBackoff;
    }

    /**
     * Returns how long done jobs are kept, so that a repeated enqueue with the same id or dedupe key finds them;
     * safety does not depend on it.
     */
    public Duration retention() {
        return retention;
    }

    /** Returns how long a job must have been due before {@code recover()} runs it. */
    @Override
    public Duration staleAfter() {
        return staleAfter;
    }

    /** Returns the longest an idle worker waits before it looks for due jobs again. */
    public Duration maxIdle() {
        return maxIdle;
    }

    /**
     * Returns how many of its last attempts a job keeps in its {@code history} (when each started, how long it took,
     * the worker, the outcome and the error); 0 keeps none.
     */
    public int attemptHistory() {
        return attemptHistory;
    }

    /** The most jobs an ordering or concurrency key's line holds; a job past it is refused (LineFullException). */
    public int maxKeyBacklog() {
        return maxKeyBacklog;
    }

    @Override
    protected void checkCombination() {
        if (maxRetryBackoff.compareTo(retryBackoff) < 0) {
            throw new IllegalStateException("maxRetryBackoff " + maxRetryBackoff + " < retryBackoff " + retryBackoff);
        }
        if (retention.compareTo(lease) <= 0) {
            throw new IllegalStateException("retention " + retention + " must exceed the lease " + lease);
        }
        if (java.util.Set.of(collection, schedulesCollection, keysCollection).size() < 3) {
            throw new IllegalStateException("the jobs, schedules and keys collections must be three ("
                    + collection + ", " + schedulesCollection + ", " + keysCollection + ")");
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
    public abstract static class Settings<B extends Settings<B>> extends StrategyBuilder<B, JobQueueConfig> {

        /** Settings for an instance on {@code database}, every one at its default. */
        protected Settings(MongoDatabase database) {
            super(database, DEFAULT_NAME, JobQueueConfig::new);
        }

        /** The jobs collection (default {@value JobQueueConfig#DEFAULT_COLLECTION}). */
        public B collection(String value) {
            config.collection = Names.fieldName(config.name(), "collection", value);
            return self();
        }

        /**
         * The collection of recurring jobs' schedules (default {@value JobQueueConfig#DEFAULT_SCHEDULES_COLLECTION}):
         * one document per schedule, fired through its own outbox.
         */
        public B schedulesCollection(String value) {
            config.schedulesCollection = Names.fieldName(config.name(), "schedulesCollection", value);
            return self();
        }

        /**
         * The collection of ordering keys (default {@value JobQueueConfig#DEFAULT_KEYS_COLLECTION}): one document per
         * key with jobs in line, holding the line.
         */
        public B keysCollection(String value) {
            config.keysCollection = Names.fieldName(config.name(), "keysCollection", value);
            return self();
        }

        /** Attempts before a job goes dead (default {@value JobQueueConfig#DEFAULT_MAX_ATTEMPTS}). */
        public B maxAttempts(int value) {
            config.maxAttempts = Checks.atLeast("maxAttempts", value, 1);
            return self();
        }

        /** A worker's lease (default 30 s). */
        public B lease(Duration value) {
            config.lease = Checks.positive("lease", value);
            return self();
        }

        /** The delay before the first retry, doubled for each retry after it (default 1 s). */
        public B retryBackoff(Duration value) {
            config.retryBackoff = Checks.positive("retryBackoff", value);
            return self();
        }

        /** The longest delay between attempts (default 1 h). */
        public B maxRetryBackoff(Duration value) {
            config.maxRetryBackoff = Checks.positive("maxRetryBackoff", value);
            return self();
        }

        /** Both bounds of the retry back-off: {@link #retryBackoff(Duration)} and {@link #maxRetryBackoff}. */
        public B retryBackoff(Duration first, Duration max) {
            return retryBackoff(first).maxRetryBackoff(max);
        }

        /** How long done jobs are kept (default 7 days). */
        public B retention(Duration value) {
            config.retention = Checks.positive("retention", value);
            return self();
        }

        /** How long a job must have been due before {@link JobQueue#recover()} runs it (default 60 s). */
        public B staleAfter(Duration value) {
            config.staleAfter = Checks.notNegative("staleAfter", value);
            return self();
        }

        /**
         * How many of its last attempts a job keeps in its history, 0 to {@value JobQueueConfig#MAX_ATTEMPT_HISTORY}
         * (default {@value JobQueueConfig#DEFAULT_ATTEMPT_HISTORY}): written with each attempt's outcome, in the same
         * write.
         */
        public B attemptHistory(int value) {
            if (value < 0 || value > MAX_ATTEMPT_HISTORY) {
                throw new IllegalArgumentException("attemptHistory must be 0 to " + MAX_ATTEMPT_HISTORY + ", was "
                        + value);
            }
            config.attemptHistory = value;
            return self();
        }

        /**
         * The most jobs an ordering or concurrency key's line holds, 1 to {@value JobQueueConfig#MAX_KEY_BACKLOG}
         * (default {@value JobQueueConfig#DEFAULT_MAX_KEY_BACKLOG}): a job enqueued on a key whose line is full is
         * refused with {@link LineFullException}, and discarded. A line is kept in chunks of at most 100 entries
         * and counted in whole chunks, so a concurrency key whose jobs ended out of order may refuse a job a little
         * before its line holds this many.
         */
        public B maxKeyBacklog(int value) {
            if (value < 1 || value > MAX_KEY_BACKLOG) {
                throw new IllegalArgumentException("maxKeyBacklog must be 1 to " + MAX_KEY_BACKLOG + ", was " + value);
            }
            config.maxKeyBacklog = value;
            return self();
        }

        /** The longest an idle worker waits before it looks for due jobs again (default 500 ms). */
        public B maxIdle(Duration value) {
            config.maxIdle = Checks.positive("maxIdle", value);
            return self();
        }
    }
}
