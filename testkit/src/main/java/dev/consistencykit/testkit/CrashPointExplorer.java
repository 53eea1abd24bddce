package dev.consistencykit.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Predicate;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.spi.Checks;

/**
 * Crashes an operation at every write it sends, in every {@link FaultMode}, and checks that recovery in a fresh
 * instance always restores the invariants.
 *
 * <p>First the operation runs once without faults to count its write sites (and its invariants are checked).
 * Then, for every site × every mode × each number of concurrent recoverers (1 and 2 by default), on fresh data:
 * the operation runs with that one fault in its own thread (a process); the recovery step runs as a new process
 * would, on the plain database, once per recoverer at the same time; the invariants are checked on data read back;
 * recovery runs once more and the invariants are checked again. For {@link FaultMode#PAUSE} the recoverers run
 * while the operation is paused before its write, then the paused owner wakes and sends it (a zombie), and
 * recovery runs again; for {@link FaultMode#PAUSE_AFTER} they run after the write landed and before its owner sees
 * the reply, then the owner wakes to a lost reply and retries. Optionally, each scenario is repeated with a crash
 * during recovery at each of recovery's own write sites, followed by a clean recovery.
 *
 * <pre>{@code
 * CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client)
 *         .workload(new Transfers())       // recovery also run by two processes at once
 *         .build().explore();              // every write site × every fault mode
 * }</pre>
 *
 * <p>Each scenario gets its own database, dropped afterwards. Not thread-safe: run one exploration at a time per
 * instance.
 */
public final class CrashPointExplorer {

    /** The longest an operation or a recovery may take before the scenario is reported as hung. */
    public static final Duration TIMEOUT = Duration.ofSeconds(60);

    private final MongoClient client;
    private final String name;
    private final Workload workload;
    private final Set<FaultMode> modes;
    private final List<Integer> recoverers;
    private final boolean recoveryFaults;
    private final Predicate<Throwable> expectedFailure;

    /**
     * One scenario, enough to replay it with {@link #run(Scenario)}.
     *
     * @param site          the operation's write site to fault, from 1
     * @param mode          the fault
     * @param recoverers    recoverers run at once
     * @param recoverySite  a recovery write site to crash at, if any
     * @param recoveryMode  the fault at that recovery site
     */
    public record Scenario(int site, FaultMode mode, int recoverers, Optional<Integer> recoverySite,
                           Optional<FaultMode> recoveryMode) {

        /** A scenario without a fault during recovery. */
        public static Scenario of(int site, FaultMode mode, int recoverers) {
            return new Scenario(site, mode, recoverers, Optional.empty(), Optional.empty());
        }

        @Override
        public String toString() {
            String s = mode + " at write #" + site + ", " + recoverers + " recoverer" + (recoverers == 1 ? "" : "s");
            if (recoverySite.isPresent()) {
                s += ", then " + recoveryMode.orElseThrow() + " at recovery write #" + recoverySite.get();
            }
            return s;
        }
    }

    /**
     * A scenario whose invariants did not hold, or that failed in a way it must not.
     *
     * @param scenario what was run
     * @param where    the write sites of the fault-free run, for reading the scenario
     * @param problems what went wrong
     */
    public record Violation(Scenario scenario, String where, List<String> problems) {
        @Override
        public String toString() {
            return scenario + " (" + where + "): " + String.join("; ", problems);
        }
    }

    /**
     * What an exploration did.
     *
     * @param name       the exploration's name
     * @param sites      the write sites of the fault-free run
     * @param scenarios  scenarios run, the fault-free one included
     * @param violations every scenario that went wrong
     */
    public record ExplorationReport(String name, List<WriteSite> sites, int scenarios, List<Violation> violations) {

        /** Copies the lists. */
        public ExplorationReport {
            sites = List.copyOf(sites);
            violations = List.copyOf(violations);
        }

        /** How many write sites the operation has. */
        public int writeSites() {
            return sites.size();
        }

        /** Whether every scenario kept the invariants. */
        public boolean passed() {
            return violations.isEmpty();
        }

        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder(name).append(": ").append(writeSites()).append(" write sites ")
                    .append(sites).append(", ").append(scenarios).append(" scenarios, ").append(violations.size())
                    .append(" violations");
            for (Violation v : violations) {
                sb.append("\n  - ").append(v);
            }
            return sb.toString();
        }
    }

    private CrashPointExplorer(Builder b) {
        this.client = b.client;
        this.name = b.name;
        this.workload = Objects.requireNonNull(b.workload, "workload");
        this.modes = Set.copyOf(b.modes);
        this.recoverers = List.copyOf(b.recoverers);
        this.recoveryFaults = b.recoveryFaults;
        this.expectedFailure = b.expectedFailure;
    }

    /** A builder exploring on databases of {@code client}. */
    public static Builder builder(MongoClient client) {
        return new Builder(client);
    }

    /** Runs every scenario. */
    public ExplorationReport explore() {
        ExecutorService executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "explorer-" + name);
            t.setDaemon(true);
            return t;
        });
        try {
            return explore(executor);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("exploration interrupted", e);
        } finally {
            executor.shutdownNow();
        }
    }

    /** Runs one scenario and returns its problems (empty when it kept the invariants). */
    public List<String> run(Scenario scenario) {
        ExecutorService executor = Executors.newCachedThreadPool();
        try {
            return runScenario(executor, scenario);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("scenario interrupted", e);
        } finally {
            executor.shutdownNow();
        }
    }

    private ExplorationReport explore(ExecutorService executor) throws InterruptedException {
        try (ScratchDatabases pool = new ScratchDatabases(client, "x" + name)) {
            scratch = pool;
            lingering = false;
            return exploreIn(executor);
        } finally {
            scratch = null;
        }
    }

    private ExplorationReport exploreIn(ExecutorService executor) throws InterruptedException {
        List<Violation> violations = new ArrayList<>();
        int scenarios = 1;
        MongoDatabase db = freshDatabase();
        FaultInjector counting = FaultInjector.counting();
        List<WriteSite> sites;
        try {
            workload.seed(db);
            Outcomes.Ended ended = awaited(executor.submit(() -> workload.operate(counting.wrap(db), new java.util.Random(0))));
            sites = counting.sites();
            List<String> problems = new ArrayList<>();
            ended.failure().ifPresent(t -> problems.add("the fault-free run failed: " + Outcomes.describe(t)));
            problems.addAll(workload.invariants(db));
            if (!problems.isEmpty()) {
                violations.add(new Violation(Scenario.of(0, FaultMode.CRASH_BEFORE, 0), "no fault", problems));
            }
        } finally {
            done(db);
        }
        String where = sites.toString();
        for (WriteSite site : sites) {
            for (FaultMode mode : EnumSet.copyOf(modes)) {
                for (int r : recoverers) {
                    Scenario scenario = Scenario.of(site.number(), mode, r);
                    scenarios++;
                    List<String> problems = runScenario(executor, scenario);
                    if (!problems.isEmpty()) {
                        violations.add(new Violation(scenario, where, problems));
                    }
                }
                if (recoveryFaults && mode.isCrash()) {
                    for (FaultMode recoveryMode : List.of(FaultMode.CRASH_BEFORE, FaultMode.CRASH_AFTER)) {
                        for (int j = 1; ; j++) {
                            Scenario scenario = new Scenario(site.number(), mode, 1, Optional.of(j),
                                    Optional.of(recoveryMode));
                            ScenarioRun run = runScenarioDetailed(executor, scenario);
                            if (!run.recoveryFaultReached()) {
                                break;
                            }
                            scenarios++;
                            if (!run.problems().isEmpty()) {
                                violations.add(new Violation(scenario, where, run.problems()));
                            }
                        }
                    }
                }
            }
        }
        return new ExplorationReport(name, sites, scenarios, violations);
    }

    private record ScenarioRun(List<String> problems, boolean recoveryFaultReached) {
    }

    private List<String> runScenario(ExecutorService executor, Scenario scenario) throws InterruptedException {
        return runScenarioDetailed(executor, scenario).problems();
    }

    private ScenarioRun runScenarioDetailed(ExecutorService executor, Scenario scenario) throws InterruptedException {
        List<String> problems = new ArrayList<>();
        boolean recoveryFaultReached = false;
        MongoDatabase db = freshDatabase();
        try {
            workload.seed(db);
            FaultInjector injector = FaultInjector.at(scenario.site(), scenario.mode());
            Future<?> op = executor.submit(() -> workload.operate(injector.wrap(db), new java.util.Random(0)));
            if (scenario.mode().isPause()) {
                if (!injector.awaitPaused(TIMEOUT)) {
                    problems.add("the operation never reached write #" + scenario.site());
                }
                recoverConcurrently(executor, db, scenario.recoverers(), problems, "recovery while the owner is paused");
                injector.release();
            }
            Outcomes.Ended ended = awaited(op);
            checkOperationEnd(ended, problems);
            if (injector.faults().isEmpty()) {
                problems.add("the operation never reached write #" + scenario.site());
            }
            if (scenario.recoverySite().isPresent()) {
                FaultInjector recoveryInjector = FaultInjector.at(scenario.recoverySite().get(),
                        scenario.recoveryMode().orElseThrow());
                Outcomes.Ended crashedRecovery = awaited(
                        executor.submit(() -> workload.recover(recoveryInjector.wrap(db))));
                recoveryFaultReached = !recoveryInjector.faults().isEmpty();
                crashedRecovery.failure().filter(t -> !(t instanceof InjectedCrash))
                        .ifPresent(t -> problems.add("the faulted recovery failed: " + Outcomes.describe(t)));
            }
            recoverConcurrently(executor, db, scenario.recoverers(), problems, "recovery");
            problems.addAll(workload.invariants(db));
            if (problems.isEmpty()) {
                recoverConcurrently(executor, db, 1, problems, "second recovery");
                workload.invariants(db).forEach(p -> problems.add("after a second recovery: " + p));
            }
        } finally {
            done(db);
        }
        return new ScenarioRun(problems, recoveryFaultReached);
    }

    private Outcomes.Ended awaited(Future<?> call) throws InterruptedException {
        Outcomes.Ended ended = Outcomes.await(call, TIMEOUT);
        if (ended.timedOut()) {
            lingering = true;
        }
        return ended;
    }

    private void checkOperationEnd(Outcomes.Ended ended, List<String> problems) {
        if (ended.timedOut()) {
            problems.add("the operation did not finish within " + TIMEOUT);
            return;
        }
        ended.failure().filter(expectedFailure.negate())
                .ifPresent(t -> problems.add("the operation failed unexpectedly: " + Outcomes.describe(t)));
    }

    private void recoverConcurrently(ExecutorService executor, MongoDatabase db, int count, List<String> problems,
                                     String what) throws InterruptedException {
        List<Future<?>> futures = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            futures.add(executor.submit(() -> workload.recover(db)));
        }
        for (Future<?> future : futures) {
            Outcomes.Ended ended = awaited(future);
            ended.failure().ifPresent(t -> problems.add(what + " failed: " + Outcomes.describe(t)));
        }
    }

    /** The databases of the exploration in progress, emptied and reused between scenarios; null outside one. */
    private volatile ScratchDatabases scratch;

    private MongoDatabase freshDatabase() {
        ScratchDatabases pool = scratch;
        return pool != null ? pool.take()
                : Sharding.of(client).applyPlan(client.getDatabase(MongoTarget.freshDatabaseName("x" + name)));
    }

    /** Set when a call of the exploration outlived its timeout: its thread may still write to the database it used. */
    private volatile boolean lingering;

    private void done(MongoDatabase db) {
        ScratchDatabases pool = scratch;
        if (pool != null && !lingering) {
            pool.give(db);
        } else {
            MongoTarget.drop(db);
        }
    }

    /** Builds a {@link CrashPointExplorer}. */
    public static final class Builder {
        private final MongoClient client;
        private String name = "exploration";
        private Workload workload;
        private Set<FaultMode> modes = FaultInjector.allModes();
        private List<Integer> recoverers = List.of(1, 2);
        private boolean recoveryFaults;
        private Predicate<Throwable> expectedFailure = t -> t instanceof InjectedCrash
                || t instanceof ConsistencyException;

        private Builder(MongoClient client) {
            this.client = Objects.requireNonNull(client, "client");
        }

        /** A name for reports. */
        public Builder name(String value) {
            this.name = Objects.requireNonNull(value, "name");
            return this;
        }

        /** The workload's seed, one operation (its random seeded with 0), its recovery and its invariants. */
        public Builder workload(Workload value) {
            Objects.requireNonNull(value, "workload");
            this.workload = value;
            return this;
        }

        /** The fault modes to inject (default: all). */
        public Builder modes(Set<FaultMode> value) {
            if (value.isEmpty()) {
                throw new IllegalArgumentException("at least one fault mode");
            }
            this.modes = Set.copyOf(value);
            return this;
        }

        /** The numbers of concurrent recoverers to run each scenario with (default: 1 and 2). */
        public Builder recoverers(Integer... counts) {
            for (int c : counts) {
                Checks.atLeast("recoverers", c, 1);
            }
            this.recoverers = List.of(counts);
            return this;
        }

        /** Also crash recovery itself at each of its write sites, then recover cleanly (default: off). */
        public Builder recoveryFaults(boolean value) {
            this.recoveryFaults = value;
            return this;
        }

        /**
         * Which failures of the faulted operation are acceptable (default: an {@link InjectedCrash} or any
         * {@link ConsistencyException}); any other is a violation.
         */
        public Builder expectedFailure(Predicate<Throwable> value) {
            this.expectedFailure = Objects.requireNonNull(value, "expectedFailure");
            return this;
        }

        /** Builds the explorer. */
        public CrashPointExplorer build() {
            if (workload == null) {
                throw new IllegalStateException("a workload is required: call workload(...)");
            }
            return new CrashPointExplorer(this);
        }
    }
}
