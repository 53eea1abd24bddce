package dev.consistencykit.jobqueue;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

import org.bson.Document;

import dev.consistencykit.core.OperationId;

/**
 * A job to enqueue. Validated when enqueued: the type must be a non-blank name with a handler somewhere, the
 * payload plain data (no {@code $}-prefixed or dotted keys), max attempts positive.
 *
 * <pre>{@code
 * JobRequest befriend = JobRequest.of("befriend", new Document("a", "ann").append("b", "bob"))
 *         .withId(OperationId.of("befriend-ann-bob")).withPriority(5).delayedBy(Duration.ofSeconds(10));
 * }</pre>
 *
 * @param id          the job's id; enqueueing the same id with the same type and payload is idempotent
 * @param type        selects the handler
 * @param payload     the handler's input: a {@link Document}, or any value the database's codec registry encodes as
 *                    a document (a record, a POJO), stored as encoded; a handler reads it back as a {@code Document}
 *                    or, with {@link JobContext#payload(Class)}, as its own type
 * @param priority    higher runs first among due jobs
 * @param delay       how long after enqueueing it becomes due (server time)
 * @param maxAttempts attempts before it goes {@code DEAD}; the queue's default when empty
 * @param dedupeKey   at most one job per key: a second enqueue with the key returns the first job
 * @param orderingKey jobs with the same key run one at a time, in the order they reached the queue
 * @param concurrency at most so many jobs with its key run at once
 */
public record JobRequest(OperationId id, String type, Object payload, int priority, Duration delay,
                         OptionalInt maxAttempts, Optional<String> dedupeKey, Optional<String> orderingKey,
                         Optional<ConcurrencyLimit> concurrency) {

    /** Checks for nulls; everything else is checked when the job is enqueued. */
    public JobRequest {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(delay, "delay");
        Objects.requireNonNull(maxAttempts, "maxAttempts");
        Objects.requireNonNull(dedupeKey, "dedupeKey");
        Objects.requireNonNull(orderingKey, "orderingKey");
        Objects.requireNonNull(concurrency, "concurrency");
    }

    /**
     * A job of {@code type} with a random id, priority 0, due now. A {@code null} payload is stored (and handed to the
     * handler) as an empty document; a record or a POJO is encoded with the database's codec registry when the job is
     * enqueued.
     */
    public static JobRequest of(String type, Object payload) {
        return new JobRequest(OperationId.random(), type, payload, 0, Duration.ZERO, OptionalInt.empty(),
                Optional.empty(),
                Optional.empty(), Optional.empty());
    }

    /** This job with a caller-supplied id. */
    public JobRequest withId(OperationId value) {
        return new JobRequest(value, type, payload, priority, delay, maxAttempts, dedupeKey, orderingKey, concurrency);
    }

    /** This job with a priority (higher runs first). */
    public JobRequest withPriority(int value) {
        return new JobRequest(id, type, payload, value, delay, maxAttempts, dedupeKey, orderingKey, concurrency);
    }

    /** This job due {@code value} after it is enqueued. */
    public JobRequest delayedBy(Duration value) {
        return new JobRequest(id, type, payload, priority, value, maxAttempts, dedupeKey, orderingKey, concurrency);
    }

    /** This job with its own number of attempts. */
    public JobRequest withMaxAttempts(int value) {
        return new JobRequest(id, type, payload, priority, delay, OptionalInt.of(value), dedupeKey, orderingKey, concurrency);
    }

    /** This job deduplicated by {@code key}. */
    public JobRequest withDedupeKey(String key) {
        return new JobRequest(id, type, payload, priority, delay, maxAttempts, Optional.ofNullable(key), orderingKey, concurrency);
    }

    /**
     * This job ordered by {@code key}: the jobs with one ordering key run one at a time, each after the one before it
     * ended done (or was discarded), in the order they reached the queue; a dead job blocks its key (only) until an
     * operator replays or discards it. Priority does not reorder them.
     */
    public JobRequest withOrderingKey(String key) {
        return new JobRequest(id, type, payload, priority, delay, maxAttempts, dedupeKey, Optional.ofNullable(key),
                concurrency);
    }

    /**
     * This job limited by {@code key}: at most {@code limit} jobs with the key run at once, across every worker and
     * process ({@code limit} 1: a mutex). They start in the order they reached the queue; one that fails keeps its
     * place while it waits for its retry, one that dies leaves it. A job has an ordering key or a concurrency key, not
     * both (an ordering key is a limit of 1 that a dead job blocks).
     *
     * @throws IllegalArgumentException if {@code limit} is not between 1 and {@value ConcurrencyLimit#MAX_LIMIT}
     */
    public JobRequest withConcurrencyKey(String key, int limit) {
        return new JobRequest(id, type, payload, priority, delay, maxAttempts, dedupeKey, orderingKey,
                Optional.of(new ConcurrencyLimit(key, limit)));
    }
}
