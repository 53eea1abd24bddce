package dev.consistencykit.jobqueue.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lte;
import static dev.consistencykit.jobqueue.internal.JobSchema.ATTEMPTS;
import static dev.consistencykit.jobqueue.internal.JobSchema.DUE_STATES;
import static dev.consistencykit.jobqueue.internal.JobSchema.EFFECT_MARKER;
import static dev.consistencykit.jobqueue.internal.JobSchema.LAST_ERROR;
import static dev.consistencykit.jobqueue.internal.JobSchema.LEASE;
import static dev.consistencykit.jobqueue.internal.JobSchema.LEASE_FIELDS;
import static dev.consistencykit.jobqueue.internal.JobSchema.MAX_ATTEMPTS;
import static dev.consistencykit.jobqueue.internal.JobSchema.OWNER;
import static dev.consistencykit.jobqueue.internal.JobSchema.RUN_AT;
import static dev.consistencykit.jobqueue.internal.JobSchema.STATE;
import static dev.consistencykit.jobqueue.internal.JobSchema.TOKEN;
import static dev.consistencykit.jobqueue.internal.JobSchema.TYPE;

import java.time.Duration;
import java.util.Date;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

import org.bson.Document;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.Checks;
import dev.consistencykit.core.spi.ConditionalUpdates;
import dev.consistencykit.core.spi.GuardedResult;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.OnceEffects;
import dev.consistencykit.core.spi.Passes;
import dev.consistencykit.core.spi.PatternRecovery;
import dev.consistencykit.core.spi.UpdateOutcome;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobState;

/**
 * Recovery: requeueing jobs whose lease ran out and releasing reservations no claim holds.
 */
public final class JobRecovery implements PatternRecovery {

    private static final Logger LOG = LoggerFactory.getLogger(JobRecovery.class);

    private final JobQueueConfig config;
    private final JobStore store;
    private final JobRunner runner;
    private final JobOutbox outbox;
    private final JobHooks hooks;
    private final ServerClock clock;
    private final Supplier<String> ownerIds;

    /**
     * Recovery, through the store, with the runner (recovery runs the jobs it finds due), the outbox (it finishes
     * the relays of relayers that died holding a job) and the features' hooks (told of the jobs it requeues or sends
     * dead; each finishes in a pass what its writers that died left: the schedules fire, the lines move on).
     */
    JobRecovery(JobQueueConfig config, JobStore store, JobRunner runner, JobOutbox outbox, JobHooks hooks,
                ServerClock clock, Supplier<String> ownerIds) {
        this.config = config;
        this.store = store;
        this.runner = runner;
        this.outbox = outbox;
        this.hooks = hooks;
        this.clock = clock;
        this.ownerIds = ownerIds;
    }

    /** Held jobs a recovery pass finishes at most. */
    static final int HELD_PER_PASS = 100;

    // ---------------------------------------------------------------- sweeping and recovery

    /**
     * {@link #recover(Duration)} for the job {@code id} alone, as {@link JobAudit#interrupted} lists it: requeued (or
     * dead, on its last attempt) when its lease expired (zero: whatever its lease), for the workers to run.
     */
    @Override
    public RecoveryReport recoverOne(Object id, Duration staleAfter) {
        long start = System.nanoTime();
        store.releaseRecorded();
        Swept swept = sweep(staleAfter.isZero() ? Leases.ALL : Leases.EXPIRED, id);
        // as JobQueue.requeue counts: requeued is rolled back (for the workers), killed on its last attempt set aside
        return new RecoveryReport(config.name(), swept.examined(), 0, swept.requeued(), swept.skipped(),
                Duration.ofNanos(System.nanoTime() - start), swept.dead());
    }

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

    /** The attempt of a worker that lost its lease, for the job's history: when it started, who, and the loss. */
    private Bson lostAttempt(Document job, boolean last, String error) {
        return JobRunner.history(config, new Document("start", job.get(JobSchema.CLAIMED)).append("worker",
                job.get(OWNER)).append("outcome", (last ? JobState.DEAD : JobState.TODO).stored()).append("error",
                error));
    }

    /**
     * {@link #sweep(Leases)} of the job {@code only} alone when it is not {@code null} (an id checked by the caller).
     */
    public Swept sweep(Leases which, Object only) {
        boolean all = which == Leases.ALL;
        Bson expired = all ? eq(STATE, JobState.PROCESSING.stored())
                : and(eq(STATE, JobState.PROCESSING.stored()), lte(LEASE, Date.from(clock.now())));
        Bson filter = only == null ? expired : and(eq("_id", only), expired);
        int requeued = 0;
        int dead = 0;
        int skipped = 0;
        for (Document job : store.findAll(filter, TYPE, TOKEN, ATTEMPTS, MAX_ATTEMPTS, OWNER, JobSchema.CLAIMED,
                JobSchema.LINE_KEY, JobSchema.RUN_AT)) {
            Object id = job.get("_id");
            boolean last = job.getInteger(ATTEMPTS, 0) >= job.getInteger(MAX_ATTEMPTS, config.maxAttempts());
            String error = last ? "the worker lost its lease on the last attempt" : "the worker lost its lease";
            // a job keeps its run-at time while it is processing: requeued, it is claimable from that time again
            Bson claimable = last ? Updates.unset(JobSchema.CLAIM_AT)
                    : Updates.set(JobSchema.CLAIM_AT, job.get(JobSchema.RUN_AT));
            Bson update = Updates.combine(Updates.set(STATE, (last ? JobState.DEAD : JobState.TODO).stored()),
                    claimable, Updates.set(LAST_ERROR, error), Updates.unset(OWNER), Updates.unset(LEASE),
                    Updates.inc(TOKEN, 1L), lostAttempt(job, last, error));
            long token = ConditionalUpdates.tokenOf(job, LEASE_FIELDS);
            // the lease is checked again in the compare-and-set: a worker that renewed it since it was read keeps it
            Bson guard = all ? eq(STATE, JobState.PROCESSING.stored())
                    : and(eq(STATE, JobState.PROCESSING.stored()), lte(LEASE, Date.from(clock.now())));
            GuardedResult r = Passes.orLeftToNextPass(config.name(), "sweep: job " + Values.show(id), null,
                    () -> config.retryPolicy().execute(config.name(), id, "sweep",
                            () -> store.fenced(id, token, guard, update)));
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
                hooks.ended(new JobHook.EndedJob(id, job, JobState.DEAD, error, null));
            } else {
                requeued++;
                hooks.requeued(id, job.getString(TYPE));
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
    @Override
    public RecoveryReport recover(Duration staleAfter) {
        Objects.requireNonNull(staleAfter, "staleAfter");
        Checks.notNegative("staleAfter", staleAfter);
        store.close();
        long start = System.nanoTime();
        Swept swept = sweep(staleAfter.isZero() ? Leases.ALL : Leases.EXPIRED);
        Date heldBefore = clock.cutoff(staleAfter);   // zero: every one, whatever the clock says
        JobOutbox.HeldJobs held = outbox.releaseHeld(heldBefore, HELD_PER_PASS);
        // each feature finishes what its writers that died left: waiting jobs that joined no line and lines nothing
        // moved on, the occurrences of schedules whose firer died
        hooks.recover(staleAfter);
        int examined = swept.examined() + held.released() + held.withdrawn() + held.left();
        int forward = held.released();
        int back = held.withdrawn();
        // a job killed on its last attempt is not recovered: it waits, dead, for an operator (replay or discard)
        int dead = swept.dead();
        int skipped = swept.skipped() + held.left();
        String owner = ownerIds.get();
        Set<Object> seen = new HashSet<>();
        Date cutoff = Date.from(clock.now().minus(staleAfter));
        while (true) {
            List<Document> due = store.find(and(in(STATE, DUE_STATES), lte(RUN_AT, cutoff)), Sorts.ascending(RUN_AT),
                    0, 100, STATE, RUN_AT, JobSchema.CLAIM_AT);
            due.removeIf(d -> !seen.add(d.get("_id")));
            if (due.isEmpty()) {
                break;
            }
            for (Document d : due) {
                examined++;
                if (d.get(RUN_AT) instanceof Date runAt && !(d.get(JobSchema.CLAIM_AT) instanceof Date claimAt
                        && claimAt.getTime() == runAt.getTime())
                        && store.makeClaimable(d.get("_id"), runAt)) {
                    LOG.warn("[{}] recovery: job {} was due at {} without its claim time (its runAt was written by"
                            + " other code than this queue's, or before the queue kept claimAt); made claimable",
                            config.name(), Values.show(d.get("_id")), runAt.toInstant());
                }
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
        releaseAbandoned();
        return new RecoveryReport(config.name(), examined, forward, back, skipped,
                Duration.ofNanos(System.nanoTime() - start), dead);
    }

    /**
     * Releases the reservations on documents that no live claim holds: an earlier claim's, or a late one a paused
     * worker sent and died before releasing. Releasing a reservation is always safe: it is never applied after.
     *
     * @return reservations released
     */
    int releaseAbandoned() {
        int removed = 0;
        for (String name : store.effectCollections()) {
            MongoCollection<Document> target = store.collection(name);
            List<OnceEffects.Reservation> reservations = config.retryPolicy().execute(config.name(), null,
                    "find reservations in " + name, () -> OnceEffects.reservations(target, EFFECT_MARKER, 1_000));
            if (reservations.isEmpty()) {
                continue;
            }
            List<Object> ids = reservations.stream().map(OnceEffects.Reservation::operationId).distinct().toList();
            Map<Object, Document> byId = new HashMap<>();
            store.claimsOf(ids).forEach(d -> byId.put(Ids.idKey(d.get("_id")), d));
            for (OnceEffects.Reservation r : reservations) {
                Document job = byId.get(Ids.idKey(r.operationId()));
                boolean held = job != null && JobState.PROCESSING.stored().equals(job.getString(STATE))
                        && r.nonce().equals(job.get(OWNER) + "/" + ConditionalUpdates.tokenOf(job, LEASE_FIELDS));
                if (!held) {
                    long n = config.retryPolicy().execute(config.name(), r.operationId(), "release reservation",
                            () -> OnceEffects.release(target, EFFECT_MARKER, r.operationId(), r.nonce(),
                                    List.of(r.documentId())));
                    removed += (int) n;
                }
            }
        }
        if (removed > 0) {
            LOG.info("[{}] recovery: released {} reservations no claim holds", config.name(), removed);
        }
        return removed;
    }
}
