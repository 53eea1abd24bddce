package dev.consistencykit.jobqueue.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lte;
import static dev.consistencykit.jobqueue.internal.JobFields.ATTEMPTS;
import static dev.consistencykit.jobqueue.internal.JobFields.DUE_STATES;
import static dev.consistencykit.jobqueue.internal.JobFields.LAST_ERROR;
import static dev.consistencykit.jobqueue.internal.JobFields.LEASE;
import static dev.consistencykit.jobqueue.internal.JobFields.LEASE_FIELDS;
import static dev.consistencykit.jobqueue.internal.JobFields.LOG;
import static dev.consistencykit.jobqueue.internal.JobFields.MAX_ATTEMPTS;
import static dev.consistencykit.jobqueue.internal.JobFields.OWNER;
import static dev.consistencykit.jobqueue.internal.JobFields.RUN_AT;
import static dev.consistencykit.jobqueue.internal.JobFields.STATE;
import static dev.consistencykit.jobqueue.internal.JobFields.TOKEN;
import static dev.consistencykit.jobqueue.internal.JobFields.TYPE;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.spi.Checks;
import dev.consistencykit.core.spi.ConditionalUpdates;
import dev.consistencykit.core.spi.GuardedResult;
import dev.consistencykit.core.spi.Passes;
import dev.consistencykit.core.spi.UpdateOutcome;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobState;

/**
 * Recovery: requeueing jobs whose lease ran out and releasing reservations no claim holds.
 */
public final class JobRecovery {

    private final JobFields fields;
    private final JobQueueConfig config;
    private final JobRunner runner;
    private final JobOutbox outbox;

    /**
     * Recovery, over the shared fields, the runner (recovery runs the jobs it finds due) and the outbox (it finishes
     * the relays of relayers that died holding a job).
     */
    JobRecovery(JobFields fields, JobRunner runner, JobOutbox outbox) {
        this.fields = fields;
        this.config = fields.config;
        this.runner = runner;
        this.outbox = outbox;
    }

    /** Held jobs a recovery pass finishes at most. */
    static final int HELD_PER_PASS = 100;

    // ---------------------------------------------------------------- sweeping and recovery

    /**
     * Requeues every {@code PROCESSING} job whose lease expired (every one, when {@code all}), or sends it dead if that
     * was its last attempt; each by a compare-and-set on its fencing token, which it also bumps.
     *
     * @return how many jobs it requeued, sent dead, and left to another sweeper or a later pass
     */
    public Swept sweep(Leases which) {
        return sweep(which, null);
    }

    /** Which claimed jobs a sweep takes back: those whose lease expired, or every one. */
    public enum Leases {
        /** Only jobs whose lease expired (server time): a worker that renews in time keeps its job. */
        EXPIRED,
        /** Every claimed job, whatever its lease (recovery with a zero staleness). */
        ALL
    }

    /**
     * What a sweep did.
     *
     * @param requeued jobs taken back for another attempt
     * @param dead     jobs whose lease ran out on their last attempt, sent dead
     * @param skipped  jobs another sweeper or the worker itself moved first, or left to the next pass
     */
    public record Swept(int requeued, int dead, int skipped) {

        /** Every job the sweep looked at. */
        public int examined() {
            return requeued + dead + skipped;
        }
    }

    /**
     * {@link #sweep(Leases)} of the job {@code only} alone when it is not {@code null} (an id checked by the caller).
     */
    public Swept sweep(Leases which, Object only) {
        boolean all = which == Leases.ALL;
        Bson expired = all ? eq(STATE, JobState.PROCESSING.stored())
                : and(eq(STATE, JobState.PROCESSING.stored()), lte(LEASE, Date.from(fields.clock.now())));
        Bson filter = only == null ? expired : and(eq("_id", only), expired);
        int requeued = 0;
        int dead = 0;
        int skipped = 0;
        for (Document job : fields.jobs.find(filter).projection(Projections.include(TYPE, TOKEN, ATTEMPTS,
                MAX_ATTEMPTS))
                .into(new ArrayList<>())) {
            Object id = job.get("_id");
            boolean last = job.getInteger(ATTEMPTS, 0) >= job.getInteger(MAX_ATTEMPTS, config.maxAttempts());
            Bson update = last
                    ? Updates.combine(Updates.set(STATE, JobState.DEAD.stored()), Updates.set(LAST_ERROR,
                    "the worker lost its lease on the last attempt"), Updates.unset(OWNER), Updates.unset(LEASE),
                    Updates.inc(TOKEN, 1L))
                    : Updates.combine(Updates.set(STATE, JobState.TODO.stored()), Updates.set(LAST_ERROR,
                    "the worker lost its lease"), Updates.unset(OWNER), Updates.unset(LEASE),
                    Updates.inc(TOKEN, 1L));
            long token = ConditionalUpdates.tokenOf(job, LEASE_FIELDS);
            // the lease is checked again in the compare-and-set: a worker that renewed it since it was read keeps it
            Bson guard = all ? eq(STATE, JobState.PROCESSING.stored())
                    : and(eq(STATE, JobState.PROCESSING.stored()), lte(LEASE, Date.from(fields.clock.now())));
            GuardedResult r = Passes.orLeftToNextPass(config.name(), "sweep: job " + Values.show(id), null,
                    () -> config.retryPolicy().execute(config.name(), id, "sweep",
                            () -> ConditionalUpdates.fenced(fields.jobs, id, LEASE_FIELDS, token, guard, update)));
            if (r == null) {
                skipped++;
                continue;
            }
            Document now = r.document().orElse(null);
            boolean ours = r.outcome() == UpdateOutcome.APPLIED || (now != null
                    && ConditionalUpdates.tokenOf(now, LEASE_FIELDS) == token + 1
                    && !JobState.PROCESSING.stored().equals(now.getString(STATE)));
            if (!ours) {
                skipped++;
            } else if (last) {
                dead++;
                fields.dead.increment();
                fields.notify(() -> fields.listener.onDead(new OperationId(id), job.getString(TYPE),
                        "the worker lost its lease on the last attempt"));
            } else {
                requeued++;
                fields.requeued.increment();
                fields.notify(() -> fields.listener.onRequeued(new OperationId(id), job.getString(TYPE)));
            }
        }
        if (requeued + dead > 0) {
            LOG.info("[{}] sweeper: {} jobs requeued, {} dead after losing their worker", config.name(), requeued,
                    dead);
        }
        return new Swept(requeued, dead, skipped);
    }

    /**
     * Requeues jobs whose worker went quiet (every {@code PROCESSING} job when {@code staleAfter} is zero, otherwise
     * those whose lease expired), then runs, in this thread, every job that has been due for {@code staleAfter}.
     */
    public RecoveryReport recover(Duration staleAfter) {
        Objects.requireNonNull(staleAfter, "staleAfter");
        Checks.notNegative("staleAfter", staleAfter);
        fields.releases.flush();
        fields.outboxHolds.flush();
        long start = System.nanoTime();
        Swept swept = sweep(staleAfter.isZero() ? Leases.ALL : Leases.EXPIRED);
        Date heldBefore = staleAfter.isZero() ? Date.from(fields.clock.now().plusSeconds(1))
                : fields.clock.cutoff(staleAfter);
        JobOutbox.HeldJobs held = outbox.releaseHeld(heldBefore, HELD_PER_PASS);
        int examined = swept.examined() + held.released() + held.withdrawn() + held.left();
        int forward = held.released();
        int back = held.withdrawn();
        // a job killed on its last attempt is not recovered: it waits, dead, for an operator (replay or discard)
        int dead = swept.dead();
        int skipped = swept.skipped() + held.left();
        String owner = fields.newOwner();
        Set<Object> seen = new HashSet<>();
        Date cutoff = Date.from(fields.clock.now().minus(staleAfter));
        while (true) {
            List<Document> due = fields.jobs.find(and(in(STATE, DUE_STATES), lte(RUN_AT, cutoff)))
                    .projection(Projections.include(STATE)).sort(Sorts.ascending(RUN_AT)).limit(100)
                    .into(new ArrayList<>());
            due.removeIf(d -> !seen.add(d.get("_id")));
            if (due.isEmpty()) {
                break;
            }
            for (Document d : due) {
                examined++;
                // a job this pass claimed and could not finish for contention is swept back by the next pass
                JobState end = Passes.orLeftToNextPass(config.name(), "recovery: job " + Values.show(d.get("_id")),
                        null, () -> runner.claim(owner, d.get("_id")).map(c -> runner.run(c).state()).orElse(null));
                if (end == JobState.DONE) {
                    forward++;
                } else if (end == JobState.DEAD) {
                    dead++;
                } else {
                    skipped++;
                }
            }
        }
        runner.settleDone();
        fields.releaseAbandoned();
        return new RecoveryReport(config.name(), examined, forward, back, skipped,
                Duration.ofNanos(System.nanoTime() - start), dead);
    }
}
