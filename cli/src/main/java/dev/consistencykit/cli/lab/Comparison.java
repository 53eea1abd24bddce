package dev.consistencykit.cli.lab;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import org.HdrHistogram.ConcurrentHistogram;
import org.bson.Document;

import com.mongodb.MongoInterruptedException;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.OperationInterruptedException;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.InjectedCrash;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.RoundTripCounter;

/**
 * The same workloads through every pattern that can carry them, with crashes and recovery, side by side: throughput,
 * round trips and documents written per operation, latency, anomalies seen by concurrent readers, time to consistency
 * after the last crash, and invariant violations at the end.
 */
public final class Comparison {

    private static final int COST_SAMPLE = 50;
    private static final Duration RECOVERY_STALE_AFTER = Duration.ofMillis(200);
    private static final int FINAL_RECOVERY_PASSES = 50;

    /**
     * How a comparison runs.
     *
     * @param duration  how long each contender's writers run
     * @param writers   concurrent writer threads (each its own process: a crash kills it, it restarts)
     * @param readers   concurrent reader threads checking the workload's invariant on what they read
     * @param crashRate the chance that a write crashes its process (before it is sent, or after it applied)
     * @param seed      the seed of the workloads and crashes
     */
    public record Settings(Duration duration, int writers, int readers, double crashRate, long seed) {

        /** Validates. */
        public Settings {
            Objects.requireNonNull(duration, "duration");
            if (duration.isNegative() || duration.isZero() || writers < 1 || readers < 1) {
                throw new IllegalArgumentException("duration, writers and readers must be positive");
            }
            if (!(crashRate >= 0 && crashRate < 1)) {
                throw new IllegalArgumentException("crashRate must be in [0, 1), was " + crashRate);
            }
        }
    }

    /**
     * One contender's results.
     *
     * @param name                     the entry's name
     * @param pattern                  the pattern's CLI name, or {@code naive}
     * @param workload                 {@code bank-transfer} or {@code rename}
     * @param operations               operations the callers completed
     * @param opsPerSec                of those, per second
     * @param roundTripsPerOp          commands the caller sends per operation (a crash-free sample, one thread)
     * @param backgroundRoundTripsPerOp commands the pattern's background work (the ledger's committer, the queue's
     *                                 workers) sends per operation, measured on the same sample; 0 for the others
     * @param writesPerOp              documents written per operation, caller and background (same sample)
     * @param p50Millis                the caller's median latency under concurrency and crashes
     * @param p99Millis                99th percentile of the same
     * @param crashes                  processes crashed (and restarted), callers and background
     * @param rawReads                 reads of the documents as stored, by the concurrent readers
     * @param rawReaderAnomalies       of those, reads that broke the workload's invariant
     * @param patternReads             reads through the pattern's consistent read (0 when it has none)
     * @param patternReaderAnomalies   of those, reads that broke the invariant; empty when the pattern has none
     * @param recoverySeconds          time from the stop until recovery made every invariant hold; empty if never
     * @param violations               invariants still violated after recovery
     * @param anomalies                what the raw readers' anomalies mean for this pattern, in one sentence
     * @param note                     what else the row needs to be read right (no consistent read, why; the naive
     *                                 loop's loss, or that no crash fell between its writes), or empty
     */
    public record Entry(String name, String pattern, String workload, long operations, double opsPerSec,
                        double roundTripsPerOp, double backgroundRoundTripsPerOp, double writesPerOp,
                        double p50Millis, double p99Millis, long crashes, long rawReads, long rawReaderAnomalies,
                        long patternReads, Optional<Long> patternReaderAnomalies, Optional<Double> recoverySeconds,
                        List<String> violations, String anomalies, String note) {

        /** Copies the list. */
        public Entry {
            violations = List.copyOf(violations);
        }

        /** The JSON object of this entry. */
        public Document json() {
            return new Document("name", name).append("pattern", pattern).append("workload", workload)
                    .append("operations", operations).append("opsPerSec", round(opsPerSec))
                    .append("roundTripsPerOp", round(roundTripsPerOp))
                    .append("backgroundRoundTripsPerOp", round(backgroundRoundTripsPerOp))
                    .append("writesPerOp", round(writesPerOp))
                    .append("p50Millis", round(p50Millis)).append("p99Millis", round(p99Millis))
                    .append("crashes", crashes).append("rawReads", rawReads)
                    .append("rawReaderAnomalies", rawReaderAnomalies).append("patternReads", patternReads)
                    .append("patternReaderAnomalies", patternReaderAnomalies.orElse(null))
                    .append("recoverySeconds", recoverySeconds.map(Comparison::round).orElse(null))
                    .append("violations", violations.size())
                    .append("violationDetails", violations.subList(0, Math.min(3, violations.size())))
                    .append("anomalies", anomalies).append("note", note);
        }
    }

    /**
     * What a comparison produced.
     *
     * @param entries     one per contender that finished, in order
     * @param contenders  how many contenders the run had
     * @param interrupted whether the run was interrupted before the last one finished
     */
    public record Result(List<Entry> entries, int contenders, boolean interrupted) {

        /** Copies the list. */
        public Result {
            entries = List.copyOf(entries);
        }
    }

    private Comparison() {
    }

    /**
     * Runs every contender of {@link Contender#all()}, each on a fresh database of {@code target}. An interruption of
     * the calling thread stops the contender running, drops its database and returns the entries finished so far
     * (with the thread's interrupt flag cleared: the result says it was interrupted, and the caller can still close
     * its client).
     */
    public static Result run(MongoTarget target, Settings settings, Consumer<String> progress) {
        List<Entry> entries = new ArrayList<>();
        List<Contender> contenders = Contenders.all();
        for (int i = 0; i < contenders.size(); i++) {
            Contender c = contenders.get(i);
            progress.accept(bar(i, contenders.size()) + " " + c.name() + " (" + c.workload() + ")");
            MongoDatabase db = target.client().getDatabase(MongoTarget.freshDatabaseName("compare"));
            boolean interrupted = false;
            try {
                entries.add(run(target, db, c, settings));
            } catch (InterruptedException | MongoInterruptedException | OperationInterruptedException e) {
                interrupted = true;   // while waiting, or inside a driver call (setting up, measuring the cost)
            } finally {
                // the interrupt flag is cleared first, so that the drop can still talk to the server
                interrupted |= Thread.interrupted();
                db.drop();
            }
            if (interrupted || Thread.interrupted()) {
                return new Result(entries, contenders.size(), true);
            }
        }
        progress.accept(bar(contenders.size(), contenders.size()) + " done");
        return new Result(entries, contenders.size(), false);
    }

    private static String bar(int done, int total) {
        int width = 20;
        int filled = done * width / total;
        return "[" + "#".repeat(filled) + ".".repeat(width - filled) + "] " + done + "/" + total;
    }

    private static Entry run(MongoTarget target, MongoDatabase db, Contender c, Settings settings)
            throws InterruptedException {
        c.setup(db);
        Random sample = new Random(settings.seed());
        Contender.Instance sampler = c.start(db);
        sampler.operation(sample);
        while (sampler.background()) {
            // the warm-up's background work, so that the sample below starts from an idle pattern
        }
        RoundTripCounter.RoundTrips callerCost;
        RoundTripCounter.RoundTrips backgroundCost;
        try (RoundTripCounter counter = RoundTripCounter.attach(target, db.getName())) {
            for (int i = 0; i < COST_SAMPLE; i++) {
                sampler.operation(sample);
            }
            callerCost = counter.snapshot();
            counter.reset();
            while (sampler.background()) {
                // drain what the sample left to the background
            }
            backgroundCost = counter.snapshot();
        }

        AtomicBoolean running = new AtomicBoolean(true);
        AtomicLong operations = new AtomicLong();
        AtomicLong crashes = new AtomicLong();
        AtomicLong rawReads = new AtomicLong();
        AtomicLong rawAnomalies = new AtomicLong();
        AtomicLong patternReads = new AtomicLong();
        AtomicLong patternAnomalies = new AtomicLong();
        AtomicLong patternDeclined = new AtomicLong();
        boolean hasPatternRead = c.noConsistentRead().isEmpty();
        int background = c.backgroundProcesses(settings.writers());
        // each caller's operation time in nanoseconds, three significant digits (HdrHistogram, as the peer benchmarks)
        ConcurrentHistogram latencies = new ConcurrentHistogram(3);
        ExecutorService pool = Executors.newFixedThreadPool(settings.writers() + background
                + 2 * settings.readers() + 1);
        List<Future<?>> futures = new ArrayList<>();
        long start = System.nanoTime();
        try {
            for (int w = 0; w < settings.writers(); w++) {
                long seed = settings.seed() * 31 + w;
                futures.add(pool.submit(() -> process(db, c, settings.crashRate(), seed, running, crashes,
                        (instance, random) -> {
                            long begin = System.nanoTime();
                            try {
                                instance.operation(random);
                            } catch (ConsistencyException refused) {
                                // insufficient funds, a conflict that outlasted its retries: no effect, answered
                            }
                            latencies.recordValue(System.nanoTime() - begin);
                            operations.incrementAndGet();
                        })));
            }
            // the background work a README recommends (a committer, workers), each itself a process that may crash
            for (int b = 0; b < background; b++) {
                long seed = settings.seed() * 37 + b;
                futures.add(pool.submit(() -> process(db, c, settings.crashRate(), seed, running, crashes,
                    (instance, random) -> {
                        boolean worked;
                        try {
                            worked = instance.background();
                        } catch (ConsistencyException refused) {
                            worked = false;   // a job's handler refused, a conflict: the pattern retries it
                        }
                        if (!worked) {
                            TimeUnit.MILLISECONDS.sleep(1);
                        }
                    })));
            }
            for (int r = 0; r < settings.readers(); r++) {
                Random rawRandom = new Random(settings.seed() * 17 + r);
                futures.add(pool.submit(() -> {
                    Contender.Instance reader = c.start(db);
                    while (running.get()) {
                        rawReads.incrementAndGet();
                        if (!reader.rawReadIsConsistent(rawRandom)) {
                            rawAnomalies.incrementAndGet();
                        }
                    }
                }));
                if (hasPatternRead) {
                    Random patternRandom = new Random(settings.seed() * 19 + r);
                    futures.add(pool.submit(() -> {
                        Contender.Instance reader = c.start(db);
                        while (running.get()) {
                            Optional<Boolean> consistent = reader.patternReadIsConsistent(patternRandom);
                            if (consistent.isEmpty()) {
                                patternDeclined.incrementAndGet();
                            } else {
                                patternReads.incrementAndGet();
                                if (!consistent.get()) {
                                    patternAnomalies.incrementAndGet();
                                }
                            }
                        }
                    }));
                }
            }
            futures.add(pool.submit(() -> {
                Contender.Instance recoverer = c.start(db);
                while (running.get()) {
                    recoverer.recover(RECOVERY_STALE_AFTER);
                    TimeUnit.MILLISECONDS.sleep(100);
                }
                return null;
            }));
            TimeUnit.NANOSECONDS.sleep(settings.duration().toNanos());
        } catch (InterruptedException e) {
            // stop every writer, reader and background process of this contender before leaving
            running.set(false);
            pool.shutdownNow();
            awaitQuietly(pool);
            throw e;
        } finally {
            running.set(false);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        try {
            for (Future<?> f : futures) {
                f.get();
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException(c.name() + " failed: " + e.getCause(), e.getCause());
        } finally {
            pool.shutdownNow();
        }

        long recoveryStart = System.nanoTime();
        Contender.Instance finisher = c.start(db);
        while (finisher.background()) {
            // what the callers left to the background is the pattern's to finish, like recovery
        }
        List<String> violations = c.invariants(db);
        for (int pass = 0; pass < FINAL_RECOVERY_PASSES && !violations.isEmpty(); pass++) {
            if (pass > 0) {
                // a job whose attempt failed is due again after its back-off (a few milliseconds here)
                LockSupport.parkNanos(Duration.ofMillis(1).toNanos());
            }
            finisher.recover(Duration.ZERO);
            while (finisher.background()) {
                // and what recovery gave back
            }
            violations = c.invariants(db);
        }
        Optional<Double> recovery = violations.isEmpty()
                ? Optional.of((System.nanoTime() - recoveryStart) / 1e9) : Optional.empty();
        String note = c.noConsistentRead().map(reason -> "no consistent read: " + reason).orElse(
                patternDeclined.get() == 0 ? "" : "the consistent read declined " + patternDeclined.get()
                        + " times: something stayed in flight on the documents for its whole wait");
        if ("naive".equals(c.pattern())) {
            note = (violations.isEmpty()
                    ? "no crash fell between its two writes in this run (" + crashes.get() + " crashes, each before"
                    + " the first write or after the second); run longer or with another --seed to see the loss"
                    : "lost money: a crash fell between its two writes, and nothing can finish or undo it")
                    + (note.isEmpty() ? "" : "; " + note);
        }
        return new Entry(c.name(), c.pattern(), c.workload(), operations.get(), operations.get() / seconds,
                callerCost.commandsPer(COST_SAMPLE), backgroundCost.commandsPer(COST_SAMPLE),
                (callerCost.documentsWritten() + backgroundCost.documentsWritten()) / (double) COST_SAMPLE, millis(latencies, 50),
                millis(latencies, 99), crashes.get(), rawReads.get(), rawAnomalies.get(), patternReads.get(),
                hasPatternRead ? Optional.of(patternAnomalies.get()) : Optional.empty(), recovery, violations,
                c.anomalies(), note);
    }

    /** Waits (bounded) for a stopped pool's threads to end; the caller was interrupted already. */
    private static void awaitQuietly(ExecutorService pool) {
        try {
            if (!pool.awaitTermination(30, TimeUnit.SECONDS)) {
                LoggerHolder.LOG.warn("a comparison's threads did not stop within 30 s of the interruption");
            }
        } catch (InterruptedException again) {
            Thread.currentThread().interrupt();
        }
    }

    /** The comparison's logger, created only when needed. */
    private static final class LoggerHolder {
        static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Comparison.class);
    }

    /** One step of a process: an operation, or a pass of background work. */
    private interface Step {
        void run(Contender.Instance instance, Random random) throws InterruptedException;
    }

    /**
     * A process doing {@code step} until it crashes, then a fresh one, until the run ends. Its crash schedule (which
     * of its writes crash, and how) follows from {@code seed} alone.
     */
    private static Void process(MongoDatabase db, Contender c, double crashRate, long seed,
                                AtomicBoolean running, AtomicLong crashes, Step step) throws InterruptedException {
        Random random = new Random(seed);
        FaultInjector process = null;
        Contender.Instance instance = null;
        while (running.get()) {
            if (process == null || process.isDead()) {
                process = FaultInjector.random(random.nextLong(), crashRate,
                        EnumSet.of(FaultMode.CRASH_BEFORE, FaultMode.CRASH_AFTER), Duration.ZERO);
                instance = c.start(process.wrap(db));
            }
            try {
                step.run(instance, random);
            } catch (InjectedCrash crash) {
                crashes.incrementAndGet();
            }
        }
        return null;
    }

    /** The {@code percentile}th percentile of {@code nanos} in milliseconds; 0 when nothing was recorded. */
    private static double millis(ConcurrentHistogram nanos, double percentile) {
        return nanos.getTotalCount() == 0 ? 0 : nanos.getValueAtPercentile(percentile) / 1e6;
    }

    static double round(double v) {
        return Math.round(v * 1000.0) / 1000.0;
    }
}
