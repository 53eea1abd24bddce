package dev.consistencykit.jobqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.spi.Calls;
import dev.consistencykit.core.spi.Checks;
import dev.consistencykit.core.spi.Listeners;
import dev.consistencykit.jobqueue.internal.ClaimedJob;
import dev.consistencykit.jobqueue.internal.EncodedJob;
import dev.consistencykit.jobqueue.internal.JobRunner;
import dev.consistencykit.jobqueue.internal.JobSchedules;
import dev.consistencykit.jobqueue.internal.JobStore;

/**
 * Worker threads of a {@link JobQueue}: each claims the highest-priority due job, runs its handler while renewing its
 * lease every third of the lease (so long jobs are not taken over), and records the outcome; when nothing is due it
 * backs off from 10 ms to 500 ms. A thread of its own fires recurring jobs' due occurrences every
 * {@link JobQueueConfig#maxIdle()}.
 *
 * <p>A pool never dies silently. Every exception in a claim, a handler's outcome, a heartbeat or a completion is
 * logged, counted, reported to {@link JobQueueListener#onWorkerError} and backed off, and the loop goes on. A worker thread
 * that dies anyway (an {@link Error} from a handler: the library never catches one) is reported to
 * {@link JobQueueListener#onWorkerDied}, its job is given back, and a new thread takes its place. {@link #health()} shows
 * all of it.
 *
 * <p>{@link #shutdown(Duration)} stops claiming, lets running jobs finish within the grace period, gives back the jobs
 * still running after it (their late completion can then not mark them), and returns within the grace period plus
 * one operation timeout, whatever the server does; it never throws.
 *
 * <p>Thread-safe.
 */
public final class JobWorkers implements AutoCloseable {

    /**
     * What the pool is doing.
     *
     * @param workers      threads configured
     * @param alive        threads alive now
     * @param processed    jobs run to an outcome
     * @param errors       exceptions the loops met (and went on after)
     * @param threadDeaths threads that died and were replaced
     * @param lastError    the last exception met, if any
     */
    public record Health(int workers, int alive, long processed, long errors, long threadDeaths,
                         Optional<String> lastError) {
    }

    /**
     * What a shutdown left.
     *
     * @param clean      whether every worker finished within the grace period
     * @param givenBack  jobs still running after the grace period, given back (due again at once)
     * @param leftLeased jobs still running that could not be given back (the server did not answer): their lease
     *                   runs out and recovery requeues them
     * @param stillAlive worker threads still alive when shutdown returned (blocked in a call to a hung server; they
     *                   are daemon threads, their job's completion is fenced)
     */
    public record ShutdownReport(boolean clean, List<OperationId> givenBack, List<OperationId> leftLeased,
                                 int stillAlive) {

        /** Copies the lists. */
        public ShutdownReport {
            givenBack = List.copyOf(givenBack);
            leftLeased = List.copyOf(leftLeased);
        }
    }

    private static final Logger LOG = LoggerFactory.getLogger(JobWorkers.class);
    private static final long MIN_IDLE_MILLIS = 10;
    private static final long MAX_ERROR_BACKOFF_MILLIS = 5_000;

    private final JobRunner runner;
    private final JobStore store;
    private final JobSchedules schedules;
    private final Calls calls;
    private final String name;
    private final long maxIdleMillis;
    private final Duration lease;
    private final JobQueueListener listener;
    private final ThreadFactory threadFactory;
    private final Thread[] threads;
    private final List<AtomicReference<ClaimedJob>> running = new ArrayList<>();
    private final ScheduledExecutorService heartbeats;
    /** Fires recurring jobs' due occurrences, apart from the heartbeats, which a slow firing must not delay. */
    private final ScheduledExecutorService firing;
    private final AtomicLong processed = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final AtomicLong threadDeaths = new AtomicLong();
    private final AtomicReference<String> lastError = new AtomicReference<>();
    private volatile boolean stopping;

    JobWorkers(JobRunner runner, JobStore store, JobSchedules schedules, Calls calls, String name, int workers,
               Duration lease, Duration maxIdle, JobQueueListener listener, ThreadFactory threadFactory) {
        Checks.atLeast("workers", workers, 1);
        this.runner = runner;
        this.store = store;
        this.schedules = schedules;
        this.calls = calls;
        this.name = name;
        this.lease = lease;
        this.maxIdleMillis = maxIdle.toMillis();
        this.listener = listener;
        this.threadFactory = Objects.requireNonNull(threadFactory, "threadFactory");
        this.heartbeats = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name + "-heartbeat");
            t.setDaemon(true);
            return t;
        });
        this.firing = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name + "-schedules");
            t.setDaemon(true);
            return t;
        });
        this.threads = new Thread[workers];
        for (int i = 0; i < workers; i++) {
            running.add(new AtomicReference<>());
        }
        for (int i = 0; i < workers; i++) {
            spawn(i);
        }
        // fireSchedules never throws, so the future never ends but by shutdownNow: nothing to read from it
        ScheduledFuture<?> unused = firing.scheduleWithFixedDelay(this::fireSchedules, 0, maxIdleMillis,
                TimeUnit.MILLISECONDS);
    }

    private synchronized void spawn(int slot) {
        if (stopping) {
            return;
        }
        AtomicReference<ClaimedJob> current = running.get(slot);
        Thread t = threadFactory.newThread(() -> loop(current));
        if (t == null) {
            throw new IllegalStateException("the thread factory of " + name + " returned no thread");
        }
        t.setUncaughtExceptionHandler((dead, error) -> died(slot, dead, error));
        threads[slot] = t;
        t.start();
    }

    /**
     * A worker thread ended by an exception the loop does not catch (an {@link Error} from a handler): report it,
     * record its job's attempt as failed with the error's text (so the job backs off, then dies, instead of being
     * claimed again at once for ever), replace the thread.
     */
    private void died(int slot, Thread dead, Throwable error) {
        threadDeaths.incrementAndGet();
        lastError.set(error.toString());
        LOG.error("[{}] worker thread {} died; replacing it", name, dead.getName(), error);
        Listeners.call(name, () -> listener.onWorkerDied(dead.getName(), error));
        ClaimedJob claimed = running.get(slot).getAndSet(null);
        if (claimed != null) {
            failAfterDeath(claimed, error);
        }
        spawn(slot);
    }

    private void loop(AtomicReference<ClaimedJob> current) {
        String owner = runner.newOwner();
        long idle = MIN_IDLE_MILLIS;
        long backoff = MIN_IDLE_MILLIS;
        while (!stopping) {
            try {
                Optional<ClaimedJob> claimed = calls.operation("claim", null,
                        () -> runner.claim(owner, null));
                backoff = MIN_IDLE_MILLIS;
                if (claimed.isEmpty()) {
                    pause(idle);
                    idle = Math.min(idle * 2, maxIdleMillis);
                    continue;
                }
                idle = MIN_IDLE_MILLIS;
                current.set(claimed.get());
                long every = Math.max(1, lease.toMillis() / 3);
                ScheduledFuture<?> beat = heartbeats.scheduleAtFixedRate(() -> heartbeat(claimed.get()), every,
                        every, TimeUnit.MILLISECONDS);
                try {
                    // the run continues what its enqueue carried (its trace): observed as the work that call sent
                    calls.applicationCode("run job", claimed.get().claim().id(),
                            EncodedJob.carriedBy(claimed.get().job()), () -> runner.run(claimed.get()).result());
                    processed.incrementAndGet();
                    current.set(null);
                } finally {
                    // on an Error the claim stays in current, so that the thread's death gives the job back
                    beat.cancel(false);
                }
            } catch (InterruptedException e) {
                if (stopping) {
                    return;
                }
                Thread.interrupted();   // not ours to obey: shutdown sets stopping first
            } catch (RuntimeException e) {
                if (stopping) {
                    return;
                }
                // the job, if one was running, keeps its lease until it runs out: recovery requeues it
                current.set(null);
                errors.incrementAndGet();
                lastError.set(e.toString());
                LOG.warn("[{}] worker error, backing off {} ms: {}", name, backoff, e.toString());
                Listeners.call(name, () -> listener.onWorkerError(Thread.currentThread().getName(), e));
                try {
                    pause(backoff);
                } catch (InterruptedException interrupted) {
                    if (stopping) {
                        return;
                    }
                    Thread.interrupted();
                }
                backoff = Math.min(backoff * 2, MAX_ERROR_BACKOFF_MILLIS);
            }
        }
    }

    private static void pause(long millis) throws InterruptedException {
        Thread.sleep(millis);
    }

    private void heartbeat(ClaimedJob claimed) {
        try {
            calls.operation("heartbeat", claimed.claim().id(), () -> runner.heartbeat(claimed));
        } catch (RuntimeException e) {
            errors.incrementAndGet();
            lastError.set(e.toString());
            LOG.debug("[{}] heartbeat of a job failed: {}", name, e.toString());
            Listeners.call(name, () -> listener.onWorkerError(name + "-heartbeat", e));
        }
    }

    /** Fires due occurrences; never throws, since an exception would cancel every later firing. */
    private void fireSchedules() {
        if (stopping) {
            return;
        }
        try {
            calls.operation("fire schedules", null, schedules::fireDue);
        } catch (RuntimeException e) {
            errors.incrementAndGet();
            lastError.set(e.toString());
            LOG.warn("[{}] firing recurring jobs failed, trying again in {} ms: {}", name, maxIdleMillis, e.toString());
            Listeners.call(name, () -> listener.onWorkerError(name + "-schedules", e));
        }
    }

    private void failAfterDeath(ClaimedJob claimed, Throwable error) {
        try {
            calls.operation("fail job of a dead worker", claimed.claim().id(), () -> runner.died(claimed, error));
        } catch (ConsistencyException e) {
            // its lease runs out and recovery requeues it, its attempt counted by the claim
            LOG.warn("[{}] could not record the failure of job {}: {}", name, claimed.claim().id(), e.toString());
        }
    }

    private boolean giveBack(ClaimedJob claimed) {
        try {
            return calls.operation("give back job", claimed.claim().id(), () -> runner.release(claimed));
        } catch (ConsistencyException e) {
            LOG.warn("[{}] could not give back job {}: {}", name, claimed.claim().id(), e.toString());
            return false;
        }
    }

    /** Jobs these workers have run to an outcome. */
    public long processed() {
        return processed.get();
    }

    /** The pool's state: threads alive, jobs run, errors met, threads replaced. */
    public synchronized Health health() {
        int alive = 0;
        for (Thread t : threads) {
            if (t != null && t.isAlive()) {
                alive++;
            }
        }
        return new Health(threads.length, alive, processed.get(), errors.get(), threadDeaths.get(),
                Optional.ofNullable(lastError.get()));
    }

    /**
     * Stops claiming, waits up to {@code grace} for running jobs to finish, then gives back the jobs still running
     * (they become due again) and interrupts their threads. Returns within {@code grace} plus one operation timeout
     * and never throws.
     *
     * @return whether every worker finished within the grace period
     */
    public boolean shutdown(Duration grace) {
        return stop(grace).clean();
    }

    /**
     * {@link #shutdown(Duration)}, reporting what it left: the jobs given back, those it could not give back, and the
     * threads still alive.
     */
    public ShutdownReport stop(Duration grace) {
        Objects.requireNonNull(grace, "grace");
        Thread[] snapshot;
        synchronized (this) {
            stopping = true;
            snapshot = threads.clone();
        }
        long deadline = System.nanoTime() + Math.max(0, grace.toNanos());
        for (Thread t : snapshot) {
            long left = deadline - System.nanoTime();
            if (t != null && left > 0) {
                try {
                    t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        boolean clean = true;
        List<OperationId> givenBack = new ArrayList<>();
        List<OperationId> leftLeased = new ArrayList<>();
        long giveBackDeadline = System.nanoTime() + calls.operationTimeout().toNanos();
        for (int i = 0; i < snapshot.length; i++) {
            Thread t = snapshot[i];
            if (t == null || !t.isAlive()) {
                continue;
            }
            clean = false;
            t.interrupt();
            ClaimedJob claimed = running.get(i).get();
            if (claimed == null) {
                continue;
            }
            OperationId id = new OperationId(claimed.claim().id());
            // one operation timeout for all give-backs: a hung server cannot hold shutdown longer
            if (System.nanoTime() < giveBackDeadline && giveBack(claimed)) {
                givenBack.add(id);
                LOG.info("[{}] gave back job {}, still running at shutdown", name, id);
            } else {
                leftLeased.add(id);
                LOG.warn("[{}] left job {} leased at shutdown: its lease runs out and recovery requeues it", name,
                        id);
            }
        }
        heartbeats.shutdownNow();
        firing.shutdownNow();
        // the jobs this queue recorded (and those its runs enqueued) need not be held once the pool stops
        try {
            calls.idempotent("release records", (Runnable) store::close);
        } catch (dev.consistencykit.core.ConsistencyException e) {
            LOG.warn("[{}] could not release the queue's records at shutdown, they stay held: {}", name,
                    e.getMessage());
        }
        int stillAlive = 0;
        for (Thread t : snapshot) {
            if (t != null && t.isAlive()) {
                stillAlive++;
            }
        }
        return new ShutdownReport(clean, givenBack, leftLeased, stillAlive);
    }

    /** {@link #shutdown(Duration)} with a grace period of one lease. */
    @Override
    public void close() {
        shutdown(lease);
    }
}
