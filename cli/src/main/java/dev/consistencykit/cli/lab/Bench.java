package dev.consistencykit.cli.lab;

import static com.mongodb.client.model.Filters.eq;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

import org.bson.Document;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.QueryPlans;
import dev.consistencykit.testkit.RoundTripCounter;
import dev.consistencykit.testkit.Sharding;

/** Timed loops for the benchmarks: a pattern's operation, and raw single-document updates with the same threads. */
public final class Bench {

    /**
     * How a benchmark runs.
     *
     * @param threads  concurrent clients
     * @param duration how long each measured phase runs
     * @param variant  which of the pattern's {@link PatternLab#variants()} to measure; empty for its first (default)
     * @param sharded  whether the benchmark's collections are sharded as docs/operations.md recommends (on a server
     *                 that can shard: see {@link Sharding})
     * @param kept     whether the benchmark leaves its database to the caller ({@link QueryPlans} explains its
     *                 queries against the data the run left, then drops it) instead of dropping it
     * @param warmUp   how long the pattern runs unmeasured first ({@link #WARM_UP} from the command line; zero for
     *                 none): compiled code, not round trips (see {@link PatternLab#bench})
     */
    public record Settings(int threads, Duration duration, String variant, boolean sharded, boolean kept,
                           Duration warmUp) {

        /** Validates. */
        public Settings {
            if (threads < 1) {
                throw new IllegalArgumentException("threads must be >= 1, was " + threads);
            }
            Objects.requireNonNull(duration, "duration");
            if (duration.isNegative() || duration.isZero()) {
                throw new IllegalArgumentException("duration must be > 0, was " + duration);
            }
            Objects.requireNonNull(variant, "variant");
            Objects.requireNonNull(warmUp, "warmUp");
            if (warmUp.isNegative()) {
                throw new IllegalArgumentException("warmUp must be >= 0, was " + warmUp);
            }
        }

        /** The pattern's default variant, unsharded, warmed up for {@link #WARM_UP}. */
        public Settings(int threads, Duration duration) {
            this(threads, duration, "", false, false, WARM_UP);
        }
    }

    /**
     * A fresh database for a benchmark named {@code prefix}, with each collection of {@code recommended} (collection
     * to the field of its hashed shard key, as docs/operations.md recommends) sharded when the settings ask for it;
     * the collections not named stay unsharded.
     *
     * @throws IllegalStateException if sharding was asked for and the server cannot shard, saying why
     */
    public static MongoDatabase database(MongoTarget target, String prefix, Settings settings,
                                         Map<String, String> recommended) {
        MongoDatabase db = target.client().getDatabase(MongoTarget.freshDatabaseName(prefix));
        if (settings.sharded()) {
            Sharding sharding = Sharding.of(target.client());
            sharding.unavailable().ifPresent(reason -> {
                throw new IllegalStateException("cannot shard the benchmark's collections: " + reason);
            });
            recommended.forEach((collection, field) -> sharding.shard(db, collection, new Document(field, "hashed")));
        }
        return db;
    }

    /** A benchmark is done with {@code db}: dropped, unless the settings leave it to the caller. */
    public static void release(MongoDatabase db, Settings settings) {
        if (!settings.kept()) {
            db.drop();
        }
    }

    /** Operations completed and the time they took. */
    public record Run(long operations, Duration elapsed) {

        /** Operations per second. */
        public double perSecond() {
            return operations / (elapsed.toNanos() / 1e9);
        }
    }

    /**
     * Set when a run was cut short by an interruption (SIGINT, SIGTERM): every run after it returns at once, and the
     * command prints the figures of what ran, marked partial.
     */
    private static final java.util.concurrent.atomic.AtomicBoolean STOPPED = new java.util.concurrent.atomic
            .AtomicBoolean();

    private Bench() {
    }

    /** Whether a run was cut short since {@link #start()}. */
    public static boolean stopped() {
        return STOPPED.get();
    }

    /** A command's benchmarks begin: nothing cut short yet. */
    public static void start() {
        STOPPED.set(false);
    }

    /** Marks the runs cut short (the command's thread was interrupted in an operation of its own). */
    public static void stop() {
        STOPPED.set(true);
    }

    /** Runs {@code operation(thread)} on {@code threads} threads for {@code duration}. */
    public static Run timed(int threads, Duration duration, IntConsumer operation) {
        if (STOPPED.get()) {
            return new Run(0, Duration.ZERO);
        }
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        AtomicLong count = new AtomicLong();
        long start = System.nanoTime();
        long deadline = start + duration.toNanos();
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    while (System.nanoTime() < deadline) {
                        operation.accept(thread);
                        count.incrementAndGet();
                    }
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
        } catch (InterruptedException e) {
            // a signal asked the command to stop: what ran so far is the measurement, and the command reports it
            STOPPED.set(true);
        } catch (ExecutionException e) {
            throw new IllegalStateException("benchmark operation failed: " + e.getCause(), e.getCause());
        } finally {
            pool.shutdownNow();
        }
        return new Run(count.get(), Duration.ofNanos(System.nanoTime() - start));
    }

    /**
     * How long a pattern runs before it is measured from the command line: on 2 cores the JIT compiler competes with
     * a cold run.
     */
    public static final Duration WARM_UP = Duration.ofSeconds(3);

    /** Runs {@code operation} unmeasured for the settings' warm-up, so the measured phase sees compiled code. */
    public static void warmUp(Settings settings, IntConsumer operation) {
        if (!settings.warmUp().isZero()) {
            timed(settings.threads(), settings.warmUp(), operation);
        }
    }

    /** Both sides of a comparison, each summed over its interleaved phases. */
    public record Comparison(Run pattern, Run raw) {
    }

    /** Phases each side of a comparison is split into. */
    public static final int ROUNDS = 6;

    /**
     * Runs {@code pattern} and {@code raw} in {@value #ROUNDS} alternating phases that add up to
     * {@code settings.duration()} each, so that both see the same machine: on a shared 2-core machine a single long
     * phase of each drifts with whatever else runs.
     */
    public static Comparison interleaved(Settings settings, IntConsumer pattern, IntConsumer raw) {
        Duration phase = settings.duration().dividedBy(ROUNDS);
        long patternOps = 0;
        long rawOps = 0;
        Duration patternTime = Duration.ZERO;
        Duration rawTime = Duration.ZERO;
        for (int round = 0; round < ROUNDS && !STOPPED.get(); round++) {
            Run r = timed(settings.threads(), phase, raw);
            Run p = timed(settings.threads(), phase, pattern);
            rawOps += r.operations();
            rawTime = rawTime.plus(r.elapsed());
            patternOps += p.operations();
            patternTime = patternTime.plus(p.elapsed());
        }
        return new Comparison(new Run(patternOps, patternTime), new Run(rawOps, rawTime));
    }

    /** A raw single-document update of a random one of {@code ids}: see {@link #RAW_BASELINE}. */
    public static IntConsumer rawUpdate(MongoCollection<Document> collection, List<?> ids) {
        return t -> collection.updateOne(eq("_id", ids.get(ThreadLocalRandom.current().nextInt(ids.size()))),
                Updates.inc(QueryPlans.RAW_FIELD, 1L));
    }

    /**
     * A pattern measured against raw updates: each summed over interleaved phases, with the pattern's commands and
     * documents written per operation (the raw updates' own, one each, taken out).
     */
    public record Measured(Run pattern, Run raw, double roundTripsPerOp, double writesPerOp) {
    }

    /**
     * Runs {@code pattern} once and warms it and {@code raw} up, then measures them interleaved while counting the
     * commands sent to {@code databaseName}.
     */
    public static Measured measure(MongoTarget target, String databaseName, Settings settings, IntConsumer pattern,
                                   IntConsumer raw, Consumer<String> progress, String what) {
        progress.accept("warming up");
        // one operation whatever the warm-up: an instance's own one-time costs (its first look at the server's clock)
        // are spent before the measured phase on any machine
        pattern.accept(0);
        warmUp(settings, pattern);
        timed(settings.threads(), Duration.ofSeconds(1), raw);
        progress.accept("measuring " + what + " and raw single-document updates, interleaved");
        Comparison comparison;
        RoundTripCounter.RoundTrips trips;
        try (RoundTripCounter counter = RoundTripCounter.attach(target, databaseName)) {
            comparison = interleaved(settings, pattern, raw);
            trips = counter.snapshot();
        }
        long rawOps = comparison.raw().operations();
        long ops = comparison.pattern().operations();
        return new Measured(comparison.pattern(), comparison.raw(), (double) (trips.commands() - rawOps) / ops,
                (double) (trips.documentsWritten() - rawOps) / ops);
    }

    /**
     * A hot-document run: {@code operations} operations one after another, each touching the same hot document.
     *
     * @param operations         operations run
     * @param opsPerSec          over the whole run
     * @param firstTenth         operations per second over the first tenth of the run
     * @param lastTenth          operations per second over the last tenth of the run
     * @param bytesStart         the hot document's size before the first operation
     * @param bytesEnd           its size after the last
     * @param roundTripsPerOp    commands sent per operation
     * @param writesPerOp        documents written per operation
     * @param rawOpsPerSec       raw {@code $inc} updates of the hot document per second, measured right after
     */
    public record Hot(long operations, double opsPerSec, double firstTenth, double lastTenth, long bytesStart,
                      long bytesEnd, double roundTripsPerOp, double writesPerOp, double rawOpsPerSec) {

        /** The JSON fields the hot benchmark adds. */
        public Document json() {
            return new Document("hot", true).append("hotDocumentBytesStart", bytesStart)
                    .append("hotDocumentBytesEnd", bytesEnd).append("opsPerSecFirstTenth", round(firstTenth))
                    .append("opsPerSecLastTenth", round(lastTenth));
        }

        private static double round(double v) {
            return Math.round(v * 1000.0) / 1000.0;
        }
    }

    /**
     * Runs {@code operation(i)} for i = 0…{@code operations - 1} in this thread, timing each tenth, reading the hot
     * document's size (as BSON bytes) before and after and counting the commands sent; then times raw {@code $inc}
     * updates of the hot document for a tenth as many operations.
     */
    public static Hot hot(MongoTarget target, MongoDatabase db, MongoCollection<Document> hotCollection, Object hotId,
                          int operations, IntConsumer operation, Consumer<String> progress) {
        if (operations < 10) {
            throw new IllegalArgumentException("operations must be >= 10, was " + operations);
        }
        long bytesStart = sizeOf(hotCollection, hotId);
        int tenth = operations / 10;
        double first = 0;
        double last = 0;
        long done = 0;
        long start = System.nanoTime();
        RoundTripCounter.RoundTrips trips;
        try (RoundTripCounter counter = RoundTripCounter.attach(target, db.getName())) {
            for (int part = 0; part < 10; part++) {
                long partStart = System.nanoTime();
                int end = part == 9 ? operations : (part + 1) * tenth;
                for (int i = part * tenth; i < end; i++) {
                    if (STOPPED.get() || Thread.currentThread().isInterrupted()) {
                        break;
                    }
                    try {
                        operation.accept(i);
                        done++;
                    } catch (dev.consistencykit.core.OperationInterruptedException
                             | com.mongodb.MongoInterruptedException e) {
                        Thread.interrupted();   // taken: the run stops here and reports what it did
                        STOPPED.set(true);
                    }
                }
                if (STOPPED.get() || Thread.interrupted()) {
                    STOPPED.set(true);
                    progress.accept("hot document: interrupted after " + done + " operations");
                    break;
                }
                double rate = (end - part * tenth) / ((System.nanoTime() - partStart) / 1e9);
                if (part == 0) {
                    first = rate;
                }
                if (part == 9) {
                    last = rate;
                }
                progress.accept("hot document: " + end + "/" + operations + " operations, " + Math.round(rate)
                        + " ops/s over the last tenth, " + sizeOf(hotCollection, hotId) + " bytes");
            }
            trips = counter.snapshot();
        }
        double elapsed = (System.nanoTime() - start) / 1e9;
        long bytesEnd = sizeOf(hotCollection, hotId);
        double raw = Double.NaN;
        if (!STOPPED.get()) {
            int rawOps = Math.max(1, tenth);
            long rawStart = System.nanoTime();
            for (int i = 0; i < rawOps; i++) {
                hotCollection.updateOne(eq("_id", hotId), Updates.inc(QueryPlans.RAW_FIELD, 1L));
            }
            raw = rawOps / ((System.nanoTime() - rawStart) / 1e9);
            hotCollection.updateOne(eq("_id", hotId), Updates.unset(QueryPlans.RAW_FIELD));
        }
        long ops = Math.max(1, done);
        return new Hot(done, done / elapsed, first, last, bytesStart, bytesEnd, (double) trips.commands() / ops,
                (double) trips.documentsWritten() / ops, raw);
    }

    /** The size in bytes of document {@code id} as stored. */
    public static long sizeOf(MongoCollection<Document> collection, Object id) {
        org.bson.RawBsonDocument raw = collection.withDocumentClass(org.bson.RawBsonDocument.class)
                .find(eq("_id", id)).first();
        return raw == null ? 0 : raw.getByteBuffer().remaining();
    }

    /** What the raw baseline is, for reports. */
    public static final String RAW_BASELINE = "updateOne $inc on a random document of the workload's own collection,"
            + " same threads and duration";
}
