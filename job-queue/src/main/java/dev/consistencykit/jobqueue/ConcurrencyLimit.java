package dev.consistencykit.jobqueue;

import java.util.Objects;

/**
 * At most {@code limit} jobs of {@code key} run at once, across every worker and process ({@code limit} 1: a mutex).
 * See {@link JobRequest#withConcurrencyKey}.
 *
 * @param key   the key the jobs share
 * @param limit how many of them may run at once
 */
public record ConcurrencyLimit(String key, int limit) {

    /** The largest limit: a key's line lets at most this many of its first jobs run. */
    public static final int MAX_LIMIT = 1_000;

    /**
     * Checks the limit; the key is checked when the job is enqueued.
     *
     * @throws IllegalArgumentException if {@code limit} is not between 1 and {@value #MAX_LIMIT}
     */
    public ConcurrencyLimit {
        Objects.requireNonNull(key, "key");
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException("a concurrency limit is 1 to " + MAX_LIMIT + ", was " + limit);
        }
    }
}
