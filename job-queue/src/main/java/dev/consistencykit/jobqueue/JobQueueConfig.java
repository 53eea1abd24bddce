package dev.consistencykit.jobqueue;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;

import dev.consistencykit.core.Checks;
import dev.consistencykit.core.Inputs;
import dev.consistencykit.core.RetryPolicy;

/**
 * The immutable settings of a {@link JobQueue}; built by {@link JobQueue.Builder}.
 *
 * <p>Defaults: name {@value #DEFAULT_NAME}; jobs in {@value #DEFAULT_COLLECTION}; {@value #DEFAULT_MAX_ATTEMPTS}
 * attempts; a worker's lease of 30 s ({@link #DEFAULT_LEASE}); retry back-off from 1 s ({@link #DEFAULT_RETRY_BACKOFF})
 * doubling to at most 1 h ({@link #DEFAULT_MAX_RETRY_BACKOFF}) with ±50% jitter; done jobs kept 7 days
 * ({@link #DEFAULT_RETENTION}); {@code recover()} runs jobs due for 60 s ({@link #DEFAULT_STALE_AFTER});
 * {@link RetryPolicy#DEFAULT} for transient errors; the system clock.
 *
 * @param name               the instance name
 * @param collection         the jobs collection
 * @param maxAttempts        attempts before a job goes dead, unless the job says otherwise
 * @param lease              how long a worker holds a claimed job without a heartbeat
 * @param retryBackoff       the delay before the second attempt
 * @param maxRetryBackoff    the longest delay between attempts
 * @param retention          how long done jobs are kept, so that a repeated enqueue with the same id or dedupe key
 *                           finds them; safety does not depend on it
 * @param staleAfter         how long a job must have been due before {@code recover()} runs it
 * @param retryPolicy        retry of transient errors
 * @param clock              the local clock server time is estimated from
 */
public record JobQueueConfig(String name, String collection, int maxAttempts, Duration lease, Duration retryBackoff,
                             Duration maxRetryBackoff, Duration retention, Duration staleAfter,
                             RetryPolicy retryPolicy, Clock clock) {

    /** Default name: {@value}. */
    public static final String DEFAULT_NAME = "job-queue";
    /** Default collection: {@value}. */
    public static final String DEFAULT_COLLECTION = "jobs";
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
    /** Default staleness for {@code recover()}: 60 s. */
    public static final Duration DEFAULT_STALE_AFTER = Duration.ofSeconds(60);

    /**
     * @throws NullPointerException     for a null setting
     * @throws IllegalArgumentException for a value out of range
     * @throws IllegalStateException    for settings that contradict each other
     */
    public JobQueueConfig {
        Objects.requireNonNull(name, "name");
        Inputs.fieldName(name, "collection", collection);
        Checks.atLeast("maxAttempts", maxAttempts, 1);
        positive("lease", lease);
        positive("retryBackoff", retryBackoff);
        positive("maxRetryBackoff", maxRetryBackoff);
        positive("retention", retention);
        Objects.requireNonNull(staleAfter, "staleAfter");
        Checks.notNegative("staleAfter", staleAfter);
        Objects.requireNonNull(retryPolicy, "retryPolicy");
        Objects.requireNonNull(clock, "clock");
        if (maxRetryBackoff.compareTo(retryBackoff) < 0) {
            throw new IllegalStateException("maxRetryBackoff " + maxRetryBackoff + " < retryBackoff " + retryBackoff);
        }
        if (retention.compareTo(lease) <= 0) {
            throw new IllegalStateException("retention " + retention + " must exceed the lease " + lease);
        }
    }

    static void positive(String what, Duration value) {
        Objects.requireNonNull(value, what);
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(what + " must be > 0, was " + value);
        }
    }
}
