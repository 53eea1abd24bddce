package dev.consistencykit.core;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.MongoException;
import com.mongodb.MongoInterruptedException;
import com.mongodb.MongoOperationTimeoutException;

import dev.consistencykit.core.spi.Checks;
import dev.consistencykit.core.spi.ConditionalUpdates;
import dev.consistencykit.core.spi.Deadline;
import dev.consistencykit.core.spi.MongoErrors;
import dev.consistencykit.core.spi.Transition;
import dev.consistencykit.core.spi.UpdateOutcome;

/**
 * Retry of transient errors with bounded exponential back-off and jitter.
 *
 * <p>Only errors {@link MongoErrors} classifies as transient are retried; every other error is rethrown at once.
 * Retry is only correct for idempotent requests: every write the toolkit sends is guarded, so a retried write
 * that had in fact applied is recognised (for example as {@link UpdateOutcome#ALREADY_APPLIED}) rather than
 * applied twice. A refusal by a concurrent writer ({@link MongoErrors.Kind#CONFLICT}: a write conflict, a deadlock)
 * wrote nothing and means another writer went through, so it is retried up to {@value #MAX_CONFLICT_ATTEMPTS} times
 * within the call's deadline, not {@code maxAttempts} times: writers contending for one document all get through. When the attempts run out, the result is reported honestly: {@link OutcomeUnknownException} if any
 * attempt may have been applied, {@link ServerUnavailableException} if none was (nothing sent, or every attempt
 * refused by concurrent writers).
 *
 * <p>Immutable and thread-safe. Defaults: {@value #DEFAULT_MAX_ATTEMPTS} attempts, back-off from
 * {@link #DEFAULT_INITIAL_BACKOFF} (10 ms) doubling to at most {@link #DEFAULT_MAX_BACKOFF} (1 s), with
 * {@value #DEFAULT_JITTER} jitter (each delay is drawn uniformly from ±50% of its nominal value).
 *
 * <pre>{@code
 * RetryPolicy retry = RetryPolicy.DEFAULT;
 * UpdateOutcome outcome = retry.execute("payments", id, "freeze",
 *         () -> ConditionalUpdates.transition(accounts, id, Transition.of("state", "open", "frozen")).outcome());
 * }</pre>
 *
 * @param maxAttempts    attempts in all, at least 1
 * @param initialBackoff the delay before the second attempt
 * @param maxBackoff     the largest delay
 * @param multiplier     growth of the delay per attempt, at least 1
 * @param jitter         fraction of each delay drawn at random, in [0, 1]
 */
public record RetryPolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff, double multiplier,
                          double jitter) {

    /** Default attempts in all: {@value}. */
    public static final int DEFAULT_MAX_ATTEMPTS = 5;
    /**
     * The most attempts of a request refused by concurrent writers (a {@link MongoErrors.Kind#CONFLICT}), unless the
     * call's deadline ends them first: {@value}. Each refusal means another writer went through, so a dozen writers of
     * one key need a dozen at worst; the bound keeps a pass over many records from spending its whole deadline on one
     * that something else keeps locked (it leaves it to the next pass).
     */
    public static final int MAX_CONFLICT_ATTEMPTS = 50;
    /** Conflicts back off like other errors for this many attempts, then keep the delay of the last. */
    private static final int CONFLICT_BACKOFF_STEPS = 6;
    /** Default delay before the second attempt: 10 ms. */
    public static final Duration DEFAULT_INITIAL_BACKOFF = Duration.ofMillis(10);
    /** Default largest delay: 1 s. */
    public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofSeconds(1);
    /** Default growth per attempt: {@value}. */
    public static final double DEFAULT_MULTIPLIER = 2.0;
    /** Default jitter: {@value}. */
    public static final double DEFAULT_JITTER = 0.5;

    /** The default policy. */
    public static final RetryPolicy DEFAULT = new RetryPolicy(DEFAULT_MAX_ATTEMPTS, DEFAULT_INITIAL_BACKOFF,
            DEFAULT_MAX_BACKOFF, DEFAULT_MULTIPLIER, DEFAULT_JITTER);

    /** A policy that tries once and never retries. */
    public static final RetryPolicy NONE = new RetryPolicy(1, Duration.ZERO, Duration.ZERO, 1.0, 0.0);

    private static final Logger LOG = LoggerFactory.getLogger(RetryPolicy.class);

    /**
     * @throws IllegalArgumentException for a value out of range
     * @throws NullPointerException     for a null duration
     */
    public RetryPolicy {
        Checks.atLeast("maxAttempts", maxAttempts, 1);
        Objects.requireNonNull(initialBackoff, "initialBackoff");
        Objects.requireNonNull(maxBackoff, "maxBackoff");
        if (initialBackoff.isNegative() || maxBackoff.isNegative()) {
            throw new IllegalArgumentException("back-off must be >= 0");
        }
        if (maxBackoff.compareTo(initialBackoff) < 0) {
            throw new IllegalArgumentException("maxBackoff " + maxBackoff + " < initialBackoff " + initialBackoff);
        }
        if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
            throw new IllegalArgumentException("multiplier must be >= 1, was " + multiplier);
        }
        if (!(jitter >= 0.0 && jitter <= 1.0)) {
            throw new IllegalArgumentException("jitter must be in [0, 1], was " + jitter);
        }
    }

    /** This policy with another number of attempts. */
    public RetryPolicy withMaxAttempts(int attempts) {
        return new RetryPolicy(attempts, initialBackoff, maxBackoff, multiplier, jitter);
    }

    /** This policy with other back-off bounds. */
    public RetryPolicy withBackoff(Duration initial, Duration max) {
        return new RetryPolicy(maxAttempts, initial, max, multiplier, jitter);
    }

    /**
     * The nominal delay after failed attempt number {@code attempt} (1-based), before jitter.
     */
    public Duration nominalDelay(int attempt) {
        double millis = initialBackoff.toNanos() * Math.pow(multiplier, Math.max(0, attempt - 1));
        long bounded = (long) Math.min(millis, (double) maxBackoff.toNanos());
        return Duration.ofNanos(bounded);
    }

    /** The delay after failed attempt {@code attempt}, with jitter applied. */
    public Duration delay(int attempt) {
        long nominal = nominalDelay(attempt).toNanos();
        if (nominal == 0 || jitter == 0.0) {
            return Duration.ofNanos(nominal);
        }
        double factor = 1.0 + jitter * (ThreadLocalRandom.current().nextDouble() * 2.0 - 1.0);
        return Duration.ofNanos(Math.min((long) (nominal * factor), maxBackoff.toNanos()));
    }

    /**
     * Runs {@code request}, retrying transient errors.
     *
     * @param instanceName for errors and log lines
     * @param documentId   the document or operation concerned, for errors; may be {@code null}
     * @param what         a short description of the request, for errors and log lines
     * @param request      an idempotent request
     * @return what {@code request} returned
     * @throws OutcomeUnknownException    if attempts ran out and one of them may have reached the server
     * @throws ServerUnavailableException if attempts ran out and none reached the server
     * @throws MongoException             a non-transient error, unchanged
     */
    public <T> T execute(String instanceName, Object documentId, String what, Supplier<T> request) {
        boolean maybeSent = false;
        int failures = 0;
        for (int attempt = 1; ; attempt++) {
            try {
                return request.get();
            } catch (MongoException e) {
                if (e instanceof MongoInterruptedException || e instanceof MongoOperationTimeoutException) {
                    throw e;   // the caller's interruption or its deadline: nothing to retry
                }
                MongoErrors.Kind kind = MongoErrors.classify(e);
                if (kind != MongoErrors.Kind.TRANSIENT_NOT_SENT && kind != MongoErrors.Kind.TRANSIENT_MAYBE_APPLIED
                        && kind != MongoErrors.Kind.CONFLICT) {
                    throw e;
                }
                maybeSent |= kind == MongoErrors.Kind.TRANSIENT_MAYBE_APPLIED;
                // a refusal by a concurrent writer means one of the writers went through: contenders converge if
                // each keeps trying, so conflicts are retried until the deadline, not maxAttempts times
                boolean conflict = kind == MongoErrors.Kind.CONFLICT;
                failures += conflict ? 0 : 1;
                Duration delay = delay(Math.min(attempt, CONFLICT_BACKOFF_STEPS + 1));
                if ((conflict ? attempt >= MAX_CONFLICT_ATTEMPTS : failures >= maxAttempts)
                        || Deadline.remainingNanos() < delay.toNanos()) {
                    if (maybeSent) {
                        throw new OutcomeUnknownException(instanceName, documentId, what
                                + ": no acknowledgement after " + attempt + " attempts; it may or may not have"
                                + " been applied and will be resolved by retry or recovery", e);
                    }
                    if (conflict) {
                        throw new ServerUnavailableException(instanceName, documentId, what + ": refused by"
                                + " concurrent writers on all " + attempt + " attempts (" + (Deadline.remainingNanos()
                                < delay.toNanos() ? "until the call's deadline" : "its most") + "); nothing was"
                                + " written", e);
                    }
                    throw new ServerUnavailableException(instanceName, documentId, what
                            + ": server unavailable after " + attempt + " attempts; nothing was sent", e);
                }
                LOG.debug("[{}] {} failed transiently (attempt {}/{}, {}), retrying in {} ms", instanceName, what,
                        attempt, maxAttempts, kind, delay.toMillis());
                sleep(instanceName, documentId, what, delay, maybeSent);
            }
        }
    }

    /** {@link #execute(String, Object, String, Supplier)} for a request without a result. */
    public void run(String instanceName, Object documentId, String what, Runnable request) {
        execute(instanceName, documentId, what, () -> {
            request.run();
            return null;
        });
    }

    private static void sleep(String instanceName, Object documentId, String what, Duration delay,
                              boolean maybeSent) {
        try {
            Thread.sleep(delay.toMillis(), (int) (delay.toNanos() % 1_000_000));
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new OperationInterruptedException(instanceName, documentId, what + ": interrupted while retrying"
                    + (maybeSent ? "; it may or may not have been applied" : "; nothing was sent"), interrupted);
        }
    }
}
