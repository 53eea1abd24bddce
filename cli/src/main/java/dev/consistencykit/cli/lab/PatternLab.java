package dev.consistencykit.cli.lab;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.testkit.ChaosRunner;
import dev.consistencykit.testkit.InterleavingExplorer;
import dev.consistencykit.testkit.MongoTarget;

/** One pattern's chaos and benchmark, run on fresh databases of a target server. */
public interface PatternLab {

    /** Retries with millisecond back-off: chaos runs inject many transient errors and must not sleep through them. */
    RetryPolicy FAST_RETRY = RetryPolicy.DEFAULT.withBackoff(Duration.ofMillis(1), Duration.ofMillis(4));

    /** The pattern's CLI name ({@code two-phase}…). */
    String pattern();

    /**
     * Crash exploration of the pattern's operations plus {@code seeds} seeded chaos runs.
     *
     * @param progress receives one line per finished step
     */
    ChaosReport chaos(MongoTarget target, int seeds, Consumer<String> progress);

    /**
     * Throughput and round trips per operation against raw single-document updates. The operation measured is the
     * pattern's steady one: every one-time cost of the lab's data (a master's first update, an account's first
     * append) is spent before the measured phase, not left to however many operations the warm-up makes on this
     * machine, so the round trips reported are the same after any {@link Bench.Settings#warmUp()}.
     */
    BenchReport bench(MongoTarget target, Bench.Settings settings, Consumer<String> progress);

    /**
     * The configurations of the pattern {@link #bench} can measure ({@link Bench.Settings#variant()}), the default
     * first; empty when it measures one.
     */
    default List<String> variants() {
        return List.of();
    }

    /**
     * The hot-document benchmark: {@code operations} operations that all touch one document, reporting that
     * document's size before and after and the throughput of the first and last tenth.
     *
     * @throws UnsupportedOperationException if the pattern has no hot-document benchmark
     */
    default BenchReport benchHot(MongoTarget target, int operations, Consumer<String> progress) {
        throw new UnsupportedOperationException(pattern() + " has no hot-document benchmark");
    }

    /** Whether {@link #benchHot} is implemented. */
    default boolean hasHotBench() {
        return false;
    }

    /**
     * Runs {@code explorers}, reporting progress and adding each violation to {@code details}.
     *
     * @return the schedules run
     */
    static int explore(List<InterleavingExplorer> explorers, List<String> details, Consumer<String> progress) {
        int schedules = 0;
        for (InterleavingExplorer explorer : explorers) {
            InterleavingExplorer.Report report = explorer.explore();
            schedules += report.schedules();
            report.violations().forEach(v -> details.add(report.name() + ": " + v));
            progress.accept("interleaved " + report.name() + ": " + report.calls().size() + " calls, "
                    + report.schedules() + " schedules, " + report.violations().size() + " violations");
        }
        return schedules;
    }

    /** Runs seeds 1…{@code seeds} of {@code runner}, with a progress line every 20 seeds. */
    static ChaosRunner.Summary runSeeds(ChaosRunner runner, int seeds, Consumer<String> progress) {
        AtomicLong done = new AtomicLong();
        return runner.runSeeds(1, seeds, r -> {
            long n = done.incrementAndGet();
            if (n % 20 == 0 || n == seeds) {
                progress.accept("chaos seeds " + n + "/" + seeds);
            }
        });
    }
}
