package dev.consistencykit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.HdrHistogram.Histogram;

/**
 * Callers that hand work to something that finishes it elsewhere (a job queue's workers): each keeps up to
 * {@value #WINDOW} items in flight, so that the queue never runs dry and never grows without bound. An item's latency
 * runs from its hand-over to the moment the worker reports it {@link #done}; the phase runs until every item handed
 * over in it is done.
 */
final class Windowed {

    /** Items each caller keeps in flight. */
    static final int WINDOW = 8;

    /** How long the phase waits, after its deadline, for the items in flight to be done. */
    static final Duration DRAIN = Duration.ofSeconds(60);

    /** Hands item {@code token} over. */
    @FunctionalInterface
    interface HandOver {
        void accept(long token) throws Exception;
    }

    private record InFlight(long startNanos, Semaphore window) {
    }

    /** What one caller's hand-overs failed: how many, and the first failure's description. */
    private record Failed(long count, String first) {
    }

    private final ConcurrentMap<Long, InFlight> inFlight = new ConcurrentHashMap<>();
    /** Items a phase stopped waiting for: done late is not done twice. */
    private final java.util.Set<Long> abandoned = ConcurrentHashMap.newKeySet();
    private final AtomicLong tokens = new AtomicLong();
    private final AtomicLong done = new AtomicLong();
    private final AtomicLong duplicates = new AtomicLong();
    private final AtomicLong lastDone = new AtomicLong();
    private final Histogram latencies = Phase.histogram();

    /** A worker finished item {@code token}; a token finished twice is counted as a duplicate. */
    void done(long token) {
        InFlight item = inFlight.remove(token);
        if (item == null) {
            if (!abandoned.remove(token)) {
                duplicates.incrementAndGet();
            }
            return;
        }
        long now = System.nanoTime();
        synchronized (latencies) {
            latencies.recordValue(Math.max(1, (now - item.startNanos()) / 1000));
        }
        lastDone.accumulateAndGet(now, Math::max);
        done.incrementAndGet();
        item.window().release();
    }

    /** Items finished more than once so far. */
    long duplicates() {
        return duplicates.get();
    }

    /** Items handed over and not done. */
    int outstanding() {
        return inFlight.size() + abandoned.size();
    }

    Phase run(int callers, Duration duration, HandOver handOver) {
        ExecutorService pool = Executors.newFixedThreadPool(callers);
        long start = System.nanoTime();
        long deadline = start + duration.toNanos();
        long doneBefore = done.get();
        Histogram before;
        synchronized (latencies) {
            before = latencies.copy();
        }
        List<Semaphore> windows = new ArrayList<>();
        long failures = 0;
        String first = "";
        try {
            List<Future<Failed>> futures = new ArrayList<>();
            for (int c = 0; c < callers; c++) {
                Semaphore window = new Semaphore(WINDOW);
                windows.add(window);
                futures.add(pool.submit(() -> {
                    long failed = 0;
                    String firstFailure = "";
                    while (System.nanoTime() < deadline) {
                        if (!window.tryAcquire(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                            break;
                        }
                        long token = tokens.incrementAndGet();
                        inFlight.put(token, new InFlight(System.nanoTime(), window));
                        try {
                            handOver.accept(token);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            break;
                        } catch (Exception e) {
                            inFlight.remove(token);
                            window.release();
                            failed++;
                            if (firstFailure.isEmpty()) {
                                firstFailure = Failures.describe(e);
                            }
                        }
                    }
                    return new Failed(failed, firstFailure);
                }));
            }
            for (Future<Failed> f : futures) {
                Failed r = f.get();
                failures += r.count();
                first = first.isEmpty() ? r.first() : first;
            }
            long drainUntil = System.nanoTime() + DRAIN.toNanos();
            for (Semaphore window : windows) {
                long left = drainUntil - System.nanoTime();
                if (left <= 0 || !window.tryAcquire(WINDOW, left, TimeUnit.NANOSECONDS)) {
                    failures += inFlight.size();
                    first = first.isEmpty() ? inFlight.size() + " items not done " + DRAIN.toSeconds()
                            + " s after the phase" : first;
                    for (Long token : inFlight.keySet()) {
                        abandoned.add(token);
                        if (inFlight.remove(token) == null) {
                            abandoned.remove(token);   // done meanwhile
                        }
                    }
                    break;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("a caller failed: " + e.getCause(), e.getCause());
        } finally {
            pool.shutdownNow();
        }
        Histogram phase;
        synchronized (latencies) {
            phase = latencies.copy();
        }
        phase.subtract(before);
        long end = Math.max(lastDone.get(), start);
        return new Phase(done.get() - doneBefore, failures, first, Duration.ofNanos(end - start), phase);
    }
}
