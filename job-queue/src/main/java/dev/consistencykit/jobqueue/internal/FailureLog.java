package dev.consistencykit.jobqueue.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import org.slf4j.Logger;

import dev.consistencykit.core.spi.Values;

/**
 * One WARN line per failed attempt, bounded: at most {@link #LINES_PER_WINDOW} lines per {@link #WINDOW} per queue
 * instance; the attempts beyond are counted and the next line says how many were not logged. So a handler that fails
 * now and then is seen when it fails, and a thousand failing at once write a few dozen lines, not a thousand.
 *
 * <p>The window is read from a monotonic clock (the process's {@link System#nanoTime}); it decides only what is
 * logged, never what is written. Thread-safe.
 */
final class FailureLog {

    static final int LINES_PER_WINDOW = 20;
    static final Duration WINDOW = Duration.ofSeconds(10);

    private final Logger log;
    private final String instance;
    private final LongSupplier nanoTime;
    private long windowStart;
    private int lines;
    private final AtomicLong unlogged = new AtomicLong();

    FailureLog(Logger log, String instance, LongSupplier nanoTime) {
        this.log = log;
        this.instance = instance;
        this.nanoTime = nanoTime;
        this.windowStart = nanoTime.getAsLong();
    }

    /**
     * A failed attempt {@code attempt} of {@code maxAttempts}, due again at {@code nextAt}: its text, and what was
     * thrown with its stack.
     */
    void failed(Object id, String type, int attempt, int maxAttempts, Instant nextAt, Duration in,
                AttemptFailure failure) {
        if (admit()) {
            log.warn("[{}] job {} of type {}: attempt {} of {} failed, next attempt at {} (in {}): {}{}", instance,
                    Values.show(id), Values.show(type), attempt, maxAttempts, nextAt, human(in), failure.text(),
                    unloggedNote(), failure.loggable());
        }
    }

    /** The last attempt failed: the job is dead (always logged, as is every death, with what was thrown). */
    void dead(Object id, String type, int attempt, int maxAttempts, AttemptFailure failure) {
        log.warn("[{}] job {} of type {} is dead after attempt {} of {} (replay or discard it): {}{}", instance,
                Values.show(id), Values.show(type), attempt, maxAttempts, failure.text(), unloggedNote(),
                failure.loggable());
    }

    static String human(Duration d) {
        long ms = d.toMillis();
        return ms < 1_000 ? ms + " ms" : ms < 120_000 ? String.format(java.util.Locale.ROOT, "%.1f s", ms / 1000.0)
                : d.toMinutes() + " min";
    }

    private synchronized boolean admit() {
        long now = nanoTime.getAsLong();
        if (now - windowStart >= WINDOW.toNanos()) {
            windowStart = now;
            lines = 0;
        }
        if (lines < LINES_PER_WINDOW) {
            lines++;
            return true;
        }
        unlogged.incrementAndGet();
        return false;
    }

    private String unloggedNote() {
        long n = unlogged.getAndSet(0);
        return n == 0 ? "" : " (" + n + " more failed attempt" + (n == 1 ? "" : "s") + " not logged since the last line)";
    }
}
