package dev.consistencykit.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Predicate;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.spi.Checks;

/**
 * Seeded random chaos: many workers run operations through fault injectors that crash, pause and fail writes at a
 * given rate, while concurrent recoverers run; at the end a final recovery runs and the invariants are checked on
 * data read back.
 *
 * <p>Each worker is a sequence of simulated processes: when one crashes, the next starts (a new
 * {@link FaultInjector}, a new database handle) and goes on with the worker's next operation. The fault schedule of
 * every process and the random choices handed to operations are derived from the seed, so the same seed gives
 * the same schedule; a failing run reports its seed, and {@link #run(long)} with that seed replays it.
 *
 * <pre>{@code
 * ChaosRunner chaos = ChaosRunner.builder(client)
 *         .name("transfer").workers(4).operationsPerWorker(5).faultRate(0.05)
 *         .workload(new Transfers())     // each operation with a random of its own, seeded from the run's
 *         .build();
 * ChaosRunner.Summary summary = chaos.runSeeds(1, 5);
 * assertThat(summary.failures()).isEmpty();
 * }</pre>
 *
 * <p>Each run gets its own database, dropped afterwards.
 */
public final class ChaosRunner {

    private static final Duration TIMEOUT = Duration.ofMinutes(2);

    private final MongoClient client;
    private final String name;
    private final int workers;
    private final int operationsPerWorker;
    private final double faultRate;
    private final Set<FaultMode> modes;
    private final Duration maxPause;
    private final int recoverers;
    private final Duration recoveryInterval;
    private final Workload workload;
    private final Predicate<Throwable> expectedFailure;

    /**
     * What one operation is given.
     *
     * @param database    the worker's current process's fault-injecting database
     * @param worker      the worker's index
     * @param incarnation how many times this worker has crashed and restarted
     * @param sequence    the operation's index within the worker
     * @param random      a generator seeded from the run's seed, the worker and the sequence
     */
    private record Context(MongoDatabase database, int worker, int incarnation, int sequence, Random random) {
    }

    /**
     * One seeded run.
     *
     * @param seed       the seed; {@link #run(long)} with it replays the schedule
     * @param operations operations started
     * @param crashes    processes that crashed
     * @param faults     faults injected
     * @param problems   violated invariants and unexpected failures
     */
    public record Result(long seed, int operations, int crashes, int faults, List<String> problems) {

        /** Copies the list. */
        public Result {
            problems = List.copyOf(problems);
        }

        /** Whether the run kept every invariant. */
        public boolean passed() {
            return problems.isEmpty();
        }

        @Override
        public String toString() {
            return "seed " + seed + ": " + operations + " operations, " + crashes + " crashes, " + faults + " faults"
                    + (problems.isEmpty() ? "" : ", FAILED (replay with seed " + seed + "): "
                    + String.join("; ", problems));
        }
    }

    /**
     * Many seeded runs.
     *
     * @param seeds      runs made
     * @param operations operations in all
     * @param crashes    crashes in all
     * @param faults     faults in all
     * @param failures   the runs that failed, each with its seed
     */
    public record Summary(int seeds, long operations, long crashes, long faults, List<Result> failures) {

        /** Copies the list. */
        public Summary {
            failures = List.copyOf(failures);
        }

        /** Invariant violations and unexpected failures in all runs. */
        public int violations() {
            return failures.stream().mapToInt(r -> r.problems().size()).sum();
        }

        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder().append(seeds).append(" seeds, ").append(operations)
                    .append(" operations, ").append(crashes).append(" crashes, ").append(faults).append(" faults, ")
                    .append(failures.size()).append(" failed seeds");
            for (Result r : failures) {
                sb.append("\n  - ").append(r);
            }
            return sb.toString();
        }
    }

    private ChaosRunner(Builder b) {
        this.client = b.client;
        this.name = b.name;
        this.workers = b.workers;
        this.operationsPerWorker = b.operationsPerWorker;
        this.faultRate = b.faultRate;
        this.modes = Set.copyOf(b.modes);
        this.maxPause = b.maxPause;
        this.recoverers = b.recoverers;
        this.recoveryInterval = b.recoveryInterval;
        this.workload = Objects.requireNonNull(b.workload, "workload");
        this.expectedFailure = b.expectedFailure;
    }

    /** A builder running on databases of {@code client}. */
    public static Builder builder(MongoClient client) {
        return new Builder(client);
    }

    /** Runs seeds {@code firstSeed}, {@code firstSeed + 1}, … ({@code count} of them). */
    public Summary runSeeds(long firstSeed, int count) {
        return runSeeds(firstSeed, count, r -> { });
    }

    /** {@link #runSeeds(long, int)}, reporting each result to {@code progress} as it ends. */
    public Summary runSeeds(long firstSeed, int count, Consumer<Result> progress) {
        long operations = 0;
        long crashes = 0;
        long faults = 0;
        List<Result> failures = new ArrayList<>();
        try (ScratchDatabases pool = new ScratchDatabases(client, "c" + name)) {
            for (int i = 0; i < count; i++) {
                Result result = run(firstSeed + i, pool);
            progress.accept(result);
            operations += result.operations();
            crashes += result.crashes();
            faults += result.faults();
                if (!result.passed()) {
                    failures.add(result);
                }
            }
        }
        return new Summary(count, operations, crashes, faults, failures);
    }

    /** One run with {@code seed}. */
    public Result run(long seed) {
        return run(seed, null);
    }

    /** One run with {@code seed}, on a database of {@code pool} (a fresh one, dropped after, when null). */
    private Result run(long seed, ScratchDatabases pool) {
        ExecutorService executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "chaos-" + name);
            t.setDaemon(true);
            return t;
        });
        MongoDatabase db = pool != null ? pool.take()
                : Sharding.of(client).applyPlan(client.getDatabase(MongoTarget.freshDatabaseName("c" + name)));
        boolean ended = false;
        try {
            Result result = run(seed, db, executor);
            ended = true;
            return result;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("chaos run interrupted", e);
        } finally {
            executor.shutdownNow();
            // a run that did not end normally may leave threads writing: its database is never handed out again
            if (pool != null && ended && awaitQuiet(executor)) {
                pool.give(db);
            } else {
                MongoTarget.drop(db);
            }
        }
    }

    /** Whether every thread of a run ended within a few seconds of its shutdown. */
    private static boolean awaitQuiet(ExecutorService executor) {
        try {
            return executor.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private Result run(long seed, MongoDatabase db, ExecutorService executor) throws InterruptedException {
        workload.seed(db);
        List<String> problems = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger operations = new AtomicInteger();
        AtomicInteger crashes = new AtomicInteger();
        AtomicLong faults = new AtomicLong();
        AtomicBoolean running = new AtomicBoolean(true);

        List<Future<?>> recoveryLoops = new ArrayList<>();
        for (int r = 0; r < recoverers; r++) {
            recoveryLoops.add(executor.submit(() -> {
                while (running.get()) {
                    workload.recover(db);
                    sleep(recoveryInterval);
                }
                return null;
            }));
        }

        List<Future<?>> supervisors = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            int worker = w;
            supervisors.add(executor.submit(() -> {
                supervise(seed, worker, db, executor, operations, crashes, faults, problems);
                return null;
            }));
        }
        for (Future<?> supervisor : supervisors) {
            Outcomes.Ended ended = Outcomes.await(supervisor, TIMEOUT);
            ended.failure().ifPresent(t -> problems.add("worker supervisor failed: " + Outcomes.describe(t)));
        }
        running.set(false);
        for (Future<?> loop : recoveryLoops) {
            Outcomes.Ended ended = Outcomes.await(loop, TIMEOUT);
            ended.failure().ifPresent(t -> problems.add("concurrent recovery failed: " + Outcomes.describe(t)));
        }
        Outcomes.Ended last = Outcomes.await(executor.submit(() -> workload.recover(db)), TIMEOUT);
        last.failure().ifPresent(t -> problems.add("final recovery failed: " + Outcomes.describe(t)));
        problems.addAll(workload.invariants(db));
        return new Result(seed, operations.get(), crashes.get(), (int) faults.get(), problems);
    }

    private void supervise(long seed, int worker, MongoDatabase db, ExecutorService executor, AtomicInteger operations,
                           AtomicInteger crashes, AtomicLong faults, List<String> problems)
            throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        for (int incarnation = 0; next.get() < operationsPerWorker; incarnation++) {
            FaultInjector injector = FaultInjector.random(mix(seed, worker, incarnation), faultRate, modes, maxPause);
            MongoDatabase processDb = injector.wrap(db);
            int inc = incarnation;
            Future<?> process = executor.submit(() -> {
                while (next.get() < operationsPerWorker) {
                    int sequence = next.getAndIncrement();
                    operations.incrementAndGet();
                    Random random = new Random(mix(seed, worker, 1_000_000L + sequence));
                    runOne(new Context(processDb, worker, inc, sequence, random), problems);
                }
                return null;
            });
            Outcomes.Ended ended = Outcomes.await(process, TIMEOUT);
            faults.addAndGet(injector.faults().size());
            if (ended.crashed()) {
                crashes.incrementAndGet();
            } else if (ended.failure().isPresent()) {
                problems.add("worker " + worker + " failed: " + Outcomes.describe(ended.failure().get()));
                return;
            }
        }
    }

    private void runOne(Context context, List<String> problems) {
        try {
            workload.operate(context.database(), context.random());
        } catch (RuntimeException e) {
            if (!expectedFailure.test(e)) {
                problems.add("worker " + context.worker() + " operation " + context.sequence() + " failed: "
                        + Outcomes.describe(e));
            }
        }
    }

    private static void sleep(Duration d) throws InterruptedException {
        if (!d.isZero()) {
            TimeUnit.MILLISECONDS.sleep(d.toMillis());
        }
    }

    private static long mix(long seed, long a, long b) {
        long h = seed * 0x9E3779B97F4A7C15L + a * 0xC2B2AE3D27D4EB4FL + b * 0x165667B19E3779F9L;
        h ^= h >>> 33;
        h *= 0xFF51AFD7ED558CCDL;
        h ^= h >>> 33;
        return h;
    }

    /** Builds a {@link ChaosRunner}. */
    public static final class Builder {
        private final MongoClient client;
        private String name = "chaos";
        private int workers = 8;
        private int operationsPerWorker = 10;
        private double faultRate = 0.05;
        private Set<FaultMode> modes = FaultInjector.allModes();
        private Duration maxPause = Duration.ofMillis(20);
        private int recoverers = 2;
        private Duration recoveryInterval = Duration.ofMillis(2);
        private Workload workload;
        private Predicate<Throwable> expectedFailure = t -> t instanceof ConsistencyException;

        private Builder(MongoClient client) {
            this.client = Objects.requireNonNull(client, "client");
        }

        /** A name for reports. */
        public Builder name(String value) {
            this.name = Objects.requireNonNull(value, "name");
            return this;
        }

        /** Concurrent workers (default 8). */
        public Builder workers(int value) {
            Checks.atLeast("workers", value, 1);
            this.workers = value;
            return this;
        }

        /** Operations each worker runs (default 10). */
        public Builder operationsPerWorker(int value) {
            Checks.atLeast("operationsPerWorker", value, 1);
            this.operationsPerWorker = value;
            return this;
        }

        /** Probability that a write is faulted (default 0.05). */
        public Builder faultRate(double value) {
            if (!(value >= 0.0 && value <= 1.0)) {
                throw new IllegalArgumentException("faultRate must be in [0, 1], was " + value);
            }
            this.faultRate = value;
            return this;
        }

        /** Fault modes to draw from (default all). */
        public Builder modes(Set<FaultMode> value) {
            if (value.isEmpty()) {
                throw new IllegalArgumentException("at least one fault mode");
            }
            this.modes = Set.copyOf(value);
            return this;
        }

        /** The longest pause of a zombie (default 20 ms). */
        public Builder maxPause(Duration value) {
            this.maxPause = Objects.requireNonNull(value, "maxPause");
            return this;
        }

        /** Recoverers running while the workers run (default 2). */
        public Builder recoverers(int value) {
            Checks.atLeast("recoverers", value, 0);
            this.recoverers = value;
            return this;
        }

        /** Pause between two passes of a concurrent recoverer (default 2 ms). */
        public Builder recoveryInterval(Duration value) {
            this.recoveryInterval = Objects.requireNonNull(value, "recoveryInterval");
            return this;
        }

        /** The workload's seed, operations (each with its worker's seeded random), recovery and invariants. */
        public Builder workload(Workload value) {
            Objects.requireNonNull(value, "workload");
            this.workload = value;
            return this;
        }

        /**
         * Which exceptions an operation may end with (default: any {@link ConsistencyException}); any other is a
         * violation. Crashes are always expected.
         */
        public Builder expectedFailure(Predicate<Throwable> value) {
            this.expectedFailure = Objects.requireNonNull(value, "expectedFailure");
            return this;
        }

        /** Builds the runner. */
        public ChaosRunner build() {
            if (workload == null) {
                throw new IllegalStateException("a workload is required: call workload(...)");
            }
            return new ChaosRunner(this);
        }
    }
}
