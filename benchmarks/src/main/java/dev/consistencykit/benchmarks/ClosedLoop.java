package dev.consistencykit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.HdrHistogram.Histogram;

/** Callers that each run an operation, wait for it, and run the next, until a deadline. */
final class ClosedLoop {

    /** One operation of caller {@code caller} (0 ... callers - 1). */
    @FunctionalInterface
    interface Operation {
        void run(int caller, int callers, SplittableRandom random) throws Exception;
    }

    private record CallerResult(long operations, long failures, String firstFailure, Histogram latencies) {
    }

    private ClosedLoop() {
    }

    static Phase run(int callers, Duration duration, Operation operation) {
        ExecutorService pool = Executors.newFixedThreadPool(callers);
        long start = System.nanoTime();
        long deadline = start + duration.toNanos();
        try {
            List<Future<CallerResult>> futures = new ArrayList<>();
            SplittableRandom seeds = new SplittableRandom();
            for (int c = 0; c < callers; c++) {
                int caller = c;
                SplittableRandom random = seeds.split();
                futures.add(pool.submit(() -> {
                    Histogram latencies = Phase.histogram();
                    long ops = 0;
                    long failures = 0;
                    String first = "";
                    while (System.nanoTime() < deadline) {
                        long began = System.nanoTime();
                        try {
                            operation.run(caller, callers, random);
                            latencies.recordValue(Math.max(1, (System.nanoTime() - began) / 1000));
                            ops++;
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            break;
                        } catch (Exception e) {
                            failures++;
                            if (first.isEmpty()) {
                                first = Failures.describe(e);
                            }
                        }
                    }
                    return new CallerResult(ops, failures, first, latencies);
                }));
            }
            Phase total = Phase.none();
            for (Future<CallerResult> f : futures) {
                CallerResult r = f.get();
                total = total.plus(new Phase(r.operations(), r.failures(), r.firstFailure(), Duration.ZERO,
                        r.latencies()));
            }
            return new Phase(total.operations(), total.failures(), total.firstFailure(),
                    Duration.ofNanos(System.nanoTime() - start), total.latencies());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("a caller failed: " + e.getCause(), e.getCause());
        } finally {
            pool.shutdownNow();
        }
    }
}
