package dev.consistencykit.jobqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.MongoException;
import com.mongodb.MongoInterruptedException;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.jobqueue.internal.JobEngine;

/**
 * Worker threads of a {@link JobQueue}: each claims the highest-priority due job, runs its handler while renewing its
 * lease every third of the lease (so long jobs are not taken over), and records the outcome; when nothing is due it
 * backs off from 10 ms to 500 ms. {@link #shutdown(Duration)} stops claiming, lets running jobs finish within the
 * grace period, and gives back the jobs still running after it, which their late completion can then not mark.
 *
 * <p>Thread-safe.
 */
public final class JobWorkers implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(JobWorkers.class);
    private static final long MIN_IDLE_MILLIS = 10;
    private static final long MAX_IDLE_MILLIS = 500;

    private final JobEngine engine;
    private final String name;
    private final Duration lease;
    private final List<Thread> threads = new ArrayList<>();
    private final List<AtomicReference<JobEngine.Claimed>> running = new ArrayList<>();
    private final ScheduledExecutorService heartbeats;
    private final AtomicLong processed = new AtomicLong();
    private volatile boolean stopping;

    JobWorkers(JobEngine engine, String name, int workers, Duration lease) {
        if (workers < 1) {
            throw new IllegalArgumentException("workers must be >= 1, was " + workers);
        }
        this.engine = engine;
        this.name = name;
        this.lease = lease;
        this.heartbeats = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name + "-heartbeat");
            t.setDaemon(true);
            return t;
        });
        for (int i = 0; i < workers; i++) {
            AtomicReference<JobEngine.Claimed> current = new AtomicReference<>();
            running.add(current);
            Thread t = new Thread(() -> loop(current), name + "-worker-" + i);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
    }

    private void loop(AtomicReference<JobEngine.Claimed> current) {
        String owner = engine.newOwner();
        long idle = MIN_IDLE_MILLIS;
        while (!stopping) {
            try {
                Optional<JobEngine.Claimed> claimed = engine.claim(owner, null);
                if (claimed.isEmpty()) {
                    Thread.sleep(idle);
                    idle = Math.min(idle * 2, MAX_IDLE_MILLIS);
                    continue;
                }
                idle = MIN_IDLE_MILLIS;
                current.set(claimed.get());
                long every = Math.max(1, lease.toMillis() / 3);
                ScheduledFuture<?> beat = heartbeats.scheduleAtFixedRate(() -> heartbeat(claimed.get()), every,
                        every, TimeUnit.MILLISECONDS);
                try {
                    engine.run(claimed.get());
                    processed.incrementAndGet();
                } finally {
                    beat.cancel(false);
                    current.set(null);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (MongoInterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (ConsistencyException | MongoException e) {
                LOG.warn("[{}] worker error, backing off: {}", name, e.toString());
                sleepQuietly(idle);
            }
        }
    }

    private void heartbeat(JobEngine.Claimed claimed) {
        try {
            engine.heartbeat(claimed);
        } catch (ConsistencyException | MongoException e) {
            LOG.debug("[{}] heartbeat of a job failed: {}", name, e.toString());
        }
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Jobs these workers have run to an outcome. */
    public long processed() {
        return processed.get();
    }

    /**
     * Stops claiming, waits up to {@code grace} for running jobs to finish, then gives back the jobs still running
     * (they become due again) and interrupts their threads.
     *
     * @return whether every worker finished within the grace period
     */
    public boolean shutdown(Duration grace) {
        stopping = true;
        long deadline = System.nanoTime() + grace.toNanos();
        boolean clean = true;
        for (int i = 0; i < threads.size(); i++) {
            Thread t = threads.get(i);
            long left = Math.max(0, deadline - System.nanoTime());
            try {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (t.isAlive()) {
                clean = false;
                JobEngine.Claimed claimed = running.get(i).get();
                if (claimed != null && engine.release(claimed)) {
                    LOG.info("[{}] gave back a job still running at shutdown", name);
                }
                t.interrupt();
            }
        }
        heartbeats.shutdownNow();
        return clean;
    }

    /** {@link #shutdown(Duration)} with a grace period of one lease. */
    @Override
    public void close() {
        shutdown(lease);
    }
}
