package dev.consistencykit.examples.lab;

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
import java.util.function.Consumer;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ConsistencyException;
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
    private static final int FINAL_RECOVERY_PASSES = 5;

    /**
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
     * @param name             the entry's name
     * @param pattern          the pattern's CLI name, or {@code naive}
     * @param workload         {@code bank-transfer} or {@code rename}
     * @param operations       operations completed by the writers
     * @param opsPerSec        of those, per second
     * @param roundTripsPerOp  commands per operation (a crash-free sample, one thread)
     * @param writesPerOp      documents written per operation (same sample)
     * @param p50Millis        median latency of a completed operation under concurrency and crashes
     * @param p99Millis        99th percentile of the same
     * @param crashes          processes crashed (and restarted)
     * @param reads            reads made by the concurrent readers
     * @param readerAnomalies  reads that broke the workload's invariant (a total off, a copy unlike its master)
     * @param recoverySeconds  time from the writers' stop until recovery made every invariant hold; empty if it never
     *                         did
     * @param violations       invariants still violated after recovery
     */
    public record Entry(String name, String pattern, String workload, long operations, double opsPerSec,
                        double roundTripsPerOp, double writesPerOp, double p50Millis, double p99Millis, long crashes,
                        long reads, long readerAnomalies, Optional<Double> recoverySeconds, List<String> violations) {

        /** Copies the list. */
        public Entry {
            violations = List.copyOf(violations);
        }

        /** The JSON object of this entry. */
        public Document json() {
            return new Document("name", name).append("pattern", pattern).append("workload", workload)
                    .append("operations", operations).append("opsPerSec", round(opsPerSec))
                    .append("roundTripsPerOp", round(roundTripsPerOp)).append("writesPerOp", round(writesPerOp))
                    .append("p50Millis", round(p50Millis)).append("p99Millis", round(p99Millis))
                    .append("crashes", crashes).append("reads", reads).append("readerAnomalies", readerAnomalies)
                    .append("recoverySeconds", recoverySeconds.map(Comparison::round).orElse(null))
                    .append("violations", violations.size())
                    .append("violationDetails", violations.subList(0, Math.min(3, violations.size())));
        }
    }

    private Comparison() {
    }

    /** Runs every contender of {@link Contenders#all()}, each on a fresh database of {@code target}. */
    public static List<Entry> run(MongoTarget target, Settings settings, Consumer<String> progress)
            throws InterruptedException {
        List<Entry> entries = new ArrayList<>();
        List<Contenders.Contender> contenders = Contenders.all();
        for (int i = 0; i < contenders.size(); i++) {
            Contenders.Contender c = contenders.get(i);
            progress.accept(bar(i, contenders.size()) + " " + c.name() + " (" + c.workload() + ")");
            MongoDatabase db = target.client().getDatabase(MongoTarget.freshDatabaseName("compare"));
            try {
                entries.add(run(target, db, c, settings));
            } finally {
                db.drop();
            }
        }
        progress.accept(bar(contenders.size(), contenders.size()) + " done");
        return entries;
    }

    private static String bar(int done, int total) {
        int width = 20;
        int filled = done * width / total;
        return "[" + "#".repeat(filled) + ".".repeat(width - filled) + "] " + done + "/" + total;
    }

    private static Entry run(MongoTarget target, MongoDatabase db, Contenders.Contender c, Settings settings)
            throws InterruptedException {
        c.setup(db);
        Random sample = new Random(settings.seed());
        Contenders.Instance sampler = c.start(db);
        sampler.operation(sample);
        RoundTripCounter.RoundTrips cost;
        try (RoundTripCounter counter = RoundTripCounter.attach(target, db.getName())) {
            for (int i = 0; i < COST_SAMPLE; i++) {
                sampler.operation(sample);
            }
            cost = counter.snapshot();
        }

        AtomicBoolean running = new AtomicBoolean(true);
        AtomicLong operations = new AtomicLong();
        AtomicLong crashes = new AtomicLong();
        AtomicLong reads = new AtomicLong();
        AtomicLong anomalies = new AtomicLong();
        List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(settings.writers() + settings.readers() + 1);
        List<Future<?>> futures = new ArrayList<>();
        long start = System.nanoTime();
        for (int w = 0; w < settings.writers(); w++) {
            long seed = settings.seed() * 31 + w;
            futures.add(pool.submit(() -> write(db, c, settings.crashRate(), seed, running, operations, crashes,
                    latencies)));
        }
        for (int r = 0; r < settings.readers(); r++) {
            Random random = new Random(settings.seed() * 17 + r);
            futures.add(pool.submit(() -> {
                Contenders.Instance reader = c.start(db);
                while (running.get()) {
                    reads.incrementAndGet();
                    if (!reader.readIsConsistent(random)) {
                        anomalies.incrementAndGet();
                    }
                }
            }));
        }
        futures.add(pool.submit(() -> {
            Contenders.Instance recoverer = c.start(db);
            while (running.get()) {
                recoverer.recover(RECOVERY_STALE_AFTER);
                TimeUnit.MILLISECONDS.sleep(100);
            }
            return null;
        }));
        TimeUnit.NANOSECONDS.sleep(settings.duration().toNanos());
        running.set(false);
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
        List<String> violations = c.invariants(db);
        for (int pass = 0; pass < FINAL_RECOVERY_PASSES && !violations.isEmpty(); pass++) {
            c.start(db).recover(Duration.ZERO);
            violations = c.invariants(db);
        }
        Optional<Double> recovery = violations.isEmpty()
                ? Optional.of((System.nanoTime() - recoveryStart) / 1e9) : Optional.empty();
        List<Long> sorted = new ArrayList<>(latencies);
        Collections.sort(sorted);
        return new Entry(c.name(), c.pattern(), c.workload(), operations.get(), operations.get() / seconds,
                cost.commandsPer(COST_SAMPLE), cost.writesPer(COST_SAMPLE), percentile(sorted, 0.50),
                percentile(sorted, 0.99), crashes.get(), reads.get(), anomalies.get(), recovery, violations);
    }

    /** A writer: a process doing operations until it crashes, then a fresh one, until the run ends. */
    private static void write(MongoDatabase db, Contenders.Contender c, double crashRate, long seed,
                              AtomicBoolean running, AtomicLong operations, AtomicLong crashes, List<Long> latencies) {
        Random random = new Random(seed);
        FaultInjector process = null;
        Contenders.Instance instance = null;
        while (running.get()) {
            if (process == null || process.isDead()) {
                process = FaultInjector.random(random.nextLong(), crashRate,
                        EnumSet.of(FaultMode.CRASH_BEFORE, FaultMode.CRASH_AFTER), Duration.ZERO);
                instance = c.start(process.wrap(db));
            }
            long start = System.nanoTime();
            try {
                instance.operation(random);
                latencies.add(System.nanoTime() - start);
                operations.incrementAndGet();
            } catch (InjectedCrash crash) {
                crashes.incrementAndGet();
            } catch (ConsistencyException refused) {
                // insufficient funds, a conflict that outlasted its retries: the operation had no effect
                latencies.add(System.nanoTime() - start);
                operations.incrementAndGet();
            }
        }
    }

    private static double percentile(List<Long> sortedNanos, double p) {
        if (sortedNanos.isEmpty()) {
            return 0;
        }
        int index = Math.min(sortedNanos.size() - 1, (int) Math.ceil(p * sortedNanos.size()) - 1);
        return sortedNanos.get(Math.max(0, index)) / 1e6;
    }

    static double round(double v) {
        return Math.round(v * 1000.0) / 1000.0;
    }
}
