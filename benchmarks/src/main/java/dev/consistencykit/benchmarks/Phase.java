package dev.consistencykit.benchmarks;

import java.time.Duration;
import java.util.Objects;

import org.HdrHistogram.Histogram;

/**
 * What a side did in one phase (or in all its phases of a cell, added up).
 *
 * @param operations   operations completed
 * @param failures     operations that failed (an error, an abort the workload does not expect)
 * @param firstFailure the first failure's message, or empty
 * @param elapsed      the phase's time, from its start to its last operation's end
 * @param latencies    each completed operation's time, in microseconds
 */
record Phase(long operations, long failures, String firstFailure, Duration elapsed, Histogram latencies) {

    /** Latencies up to an hour, three significant digits. */
    static Histogram histogram() {
        return new Histogram(3_600_000_000L, 3);
    }

    /** No phase yet. */
    static Phase none() {
        return new Phase(0, 0, "", Duration.ZERO, histogram());
    }

    Phase {
        Objects.requireNonNull(firstFailure, "firstFailure");
        Objects.requireNonNull(elapsed, "elapsed");
        Objects.requireNonNull(latencies, "latencies");
    }

    /** This phase and {@code next}, added up. */
    Phase plus(Phase next) {
        Histogram both = latencies.copy();
        both.add(next.latencies);
        return new Phase(operations + next.operations, failures + next.failures,
                firstFailure.isEmpty() ? next.firstFailure : firstFailure, elapsed.plus(next.elapsed), both);
    }

    /** Operations per second. */
    double perSecond() {
        return elapsed.isZero() ? 0 : operations / (elapsed.toNanos() / 1e9);
    }

    /** The latency at {@code percentile}, in milliseconds. */
    double latencyMillis(double percentile) {
        return latencies.getTotalCount() == 0 ? Double.NaN : latencies.getValueAtPercentile(percentile) / 1000.0;
    }
}
