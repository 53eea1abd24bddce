package dev.consistencykit.core;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.consistencykit.core.spi.Throwables;

/**
 * Runs every periodic step a set of strategies needs — recovery passes, prunes, settles, relays — on a schedule with
 * jitter, and keeps a health view per step: last success, last error, consecutive failures and lag (how late the step
 * is against its period). Every step a pattern declares is idempotent and safe from any number of processes at once,
 * so every process of an application may run its own runner.
 *
 * <pre>{@code
 * Maintenance maintenance = Maintenance.builder()
 *         .strategy(payments)                       // each pattern's own steps (recover, prune…)
 *         .step("relay orders", Duration.ofSeconds(5), () -> queue.relayOutbox(orders))
 *         .build().start();
 * maintenance.health();                              // for a health endpoint
 * maintenance.stop(Duration.ofSeconds(5));
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class Maintenance implements AutoCloseable {

    /**
     * How one step is doing.
     *
     * @param name                the step
     * @param every               its period
     * @param runs                runs so far (successful or not)
     * @param lastSuccess         when it last succeeded, if ever
     * @param lastError           its last failure, if the last run failed
     * @param consecutiveFailures failed runs since the last success
     * @param lag                 how far past its period the step is since its last success (or since the start):
     *                            zero while it keeps up; growing when it fails or stopped running
     */
    public record StepHealth(String name, Duration every, long runs, Optional<Instant> lastSuccess,
                             Optional<String> lastError, int consecutiveFailures, Duration lag) {

        /** Whether the step succeeded last and keeps up with its period. */
        public boolean healthy() {
            return consecutiveFailures == 0 && lag.isZero();
        }
    }

    /** Builds a runner. */
    public static final class Builder {
        private final List<MaintenanceStep> steps = new ArrayList<>();
        private Clock clock = Clock.systemUTC();
        private double jitter = 0.2;
        private ThreadFactory threadFactory = r -> {
            Thread t = new Thread(r, "consistency-kit-maintenance");
            t.setDaemon(true);
            return t;
        };

        private Builder() {
        }

        /** Every step {@code strategy} declares ({@link ConsistencyStrategy#maintenance()}). */
        public Builder strategy(ConsistencyStrategy<?> strategy) {
            steps.addAll(Objects.requireNonNull(strategy, "strategy").maintenance());
            return this;
        }

        /** One step of the application's own (for example relaying an outbox collection). */
        public Builder step(String name, Duration every, Runnable action) {
            steps.add(MaintenanceStep.of(name, every, action));
            return this;
        }

        /** One step. */
        public Builder step(MaintenanceStep step) {
            steps.add(Objects.requireNonNull(step, "step"));
            return this;
        }

        /**
         * The fraction of each period drawn at random, so that processes started together do not run in step.
         * Default 0.2.
         *
         * @throws IllegalArgumentException if not in [0, 1)
         */
        public Builder jitter(double value) {
            if (!(value >= 0 && value < 1)) {
                throw new IllegalArgumentException("jitter must be in [0, 1), was " + value);
            }
            this.jitter = value;
            return this;
        }

        /** The clock health is measured by. Default: the system clock. */
        public Builder clock(Clock value) {
            this.clock = Objects.requireNonNull(value, "clock");
            return this;
        }

        /** The factory of the runner's one thread. Default: a daemon thread. */
        public Builder threadFactory(ThreadFactory value) {
            this.threadFactory = Objects.requireNonNull(value, "threadFactory");
            return this;
        }

        /**
         * The runner, not started.
         *
         * @throws IllegalStateException if no step was given
         */
        public Maintenance build() {
            if (steps.isEmpty()) {
                throw new IllegalStateException("a maintenance runner needs at least one step");
            }
            return new Maintenance(this);
        }
    }

    private static final class State {
        final MaintenanceStep step;
        long runs;
        Instant lastSuccess;
        String lastError;
        int consecutiveFailures;

        State(MaintenanceStep step) {
            this.step = step;
        }
    }

    private static final Logger LOG = LoggerFactory.getLogger(Maintenance.class);
    private static final Duration FIRST_RETRY = Duration.ofSeconds(1);

    private final List<State> states = new ArrayList<>();
    private final Clock clock;
    private final double jitter;
    private final ThreadFactory threadFactory;
    private ScheduledExecutorService executor;
    private Instant started;

    private Maintenance(Builder b) {
        b.steps.forEach(s -> states.add(new State(s)));
        this.clock = b.clock;
        this.jitter = b.jitter;
        this.threadFactory = b.threadFactory;
    }

    /** A new builder. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts the schedule: each step runs once soon (within a jittered fraction of its period) and then every period.
     *
     * @return this runner
     * @throws IllegalStateException if it was started before
     */
    public synchronized Maintenance start() {
        if (executor != null) {
            throw new IllegalStateException("already started");
        }
        started = clock.instant();
        executor = Executors.newSingleThreadScheduledExecutor(threadFactory);
        for (State s : states) {
            long first = (long) (s.step.every().toMillis() * jitter * ThreadLocalRandom.current().nextDouble());
            Future<?> unused = executor.schedule(() -> runAndReschedule(s), first, TimeUnit.MILLISECONDS);
        }
        return this;
    }

    /** Runs every step once now, in the calling thread (at start-up, or from a test). */
    public void runOnce() {
        synchronized (this) {
            if (started == null) {
                started = clock.instant();
            }
        }
        for (State s : states) {
            run(s);
        }
    }

    private void runAndReschedule(State s) {
        boolean ok = run(s);
        ScheduledExecutorService ex;
        synchronized (this) {
            ex = executor;
        }
        if (ex == null || ex.isShutdown()) {
            return;
        }
        long period = s.step.every().toMillis();
        long next;
        if (ok) {
            next = (long) (period * (1 + jitter * (ThreadLocalRandom.current().nextDouble() * 2 - 1)));
        } else {
            // a failed run is retried sooner, backing off up to the step's own period
            int failures;
            synchronized (s) {
                failures = s.consecutiveFailures;
            }
            next = Math.min(period, FIRST_RETRY.toMillis() << Math.min(20, failures - 1));
        }
        // each run records its own failures and schedules the next one: the future carries nothing to check
        Future<?> unused = ex.schedule(() -> runAndReschedule(s), Math.max(1, next), TimeUnit.MILLISECONDS);
    }

    private boolean run(State s) {
        try {
            s.step.action().run();
            synchronized (s) {
                s.runs++;
                s.lastSuccess = clock.instant();
                s.lastError = null;
                s.consecutiveFailures = 0;
            }
            return true;
        } catch (RuntimeException e) {
            synchronized (s) {
                s.runs++;
                s.lastError = Throwables.describe(e);
                s.consecutiveFailures++;
            }
            LOG.warn("maintenance step '{}' failed ({} in a row): {}", s.step.name(), s.consecutiveFailures,
                    Throwables.describe(e));
            return false;
        }
    }

    /** How every step is doing. */
    public List<StepHealth> health() {
        Instant now = clock.instant();
        Instant since;
        synchronized (this) {
            since = started != null ? started : now;
        }
        List<StepHealth> out = new ArrayList<>();
        for (State s : states) {
            synchronized (s) {
                Instant base = s.lastSuccess != null ? s.lastSuccess : since;
                Duration late = Duration.between(base.plus(s.step.every()), now);
                out.add(new StepHealth(s.step.name(), s.step.every(), s.runs, Optional.ofNullable(s.lastSuccess),
                        Optional.ofNullable(s.lastError), s.consecutiveFailures,
                        late.isNegative() ? Duration.ZERO : late));
            }
        }
        return out;
    }

    /**
     * Stops the schedule and waits up to {@code grace} for a running step to end (then interrupts it).
     *
     * @return whether the runner stopped within {@code grace}
     */
    public boolean stop(Duration grace) {
        ScheduledExecutorService ex;
        synchronized (this) {
            ex = executor;
        }
        if (ex == null) {
            return true;
        }
        ex.shutdownNow();
        try {
            return ex.awaitTermination(Math.max(1, grace.toMillis()), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** {@link #stop(Duration)} with a grace period of 5 s. */
    @Override
    public void close() {
        stop(Duration.ofSeconds(5));
    }
}
