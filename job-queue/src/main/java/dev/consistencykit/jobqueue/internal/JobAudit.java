package dev.consistencykit.jobqueue.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lte;
import static dev.consistencykit.jobqueue.internal.JobSchema.ATTEMPTS;
import static dev.consistencykit.jobqueue.internal.JobSchema.CLAIMED;
import static dev.consistencykit.jobqueue.internal.JobSchema.DUE_STATES;
import static dev.consistencykit.jobqueue.internal.JobSchema.EFFECTS;
import static dev.consistencykit.jobqueue.internal.JobSchema.ENQUEUED;
import static dev.consistencykit.jobqueue.internal.JobSchema.LAST_ERROR;
import static dev.consistencykit.jobqueue.internal.JobSchema.LAST_MODIFIED;
import static dev.consistencykit.jobqueue.internal.JobSchema.LEASE;
import static dev.consistencykit.jobqueue.internal.JobSchema.OWNER;
import static dev.consistencykit.jobqueue.internal.JobSchema.RUN_AT;
import static dev.consistencykit.jobqueue.internal.JobSchema.STATE;
import static dev.consistencykit.jobqueue.internal.JobSchema.TYPE;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Sorts;

import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationView;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.Names;
import dev.consistencykit.core.spi.PatternInspection;
import dev.consistencykit.core.spi.StateSnapshot;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.jobqueue.DeadJobs;
import dev.consistencykit.jobqueue.FoundJob;
import dev.consistencykit.jobqueue.JobBacklog;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobQueueMetrics;
import dev.consistencykit.jobqueue.JobSearch;
import dev.consistencykit.jobqueue.JobState;
import dev.consistencykit.jobqueue.RunningJob;

/**
 * The operator's reads: one job with the documents its handler changed, the jobs done lately, the ones a worker went
 * quiet on, held by a quiet relayer or dead, the counts by state, the backlog by type, the records held, and the
 * counters.
 */
public final class JobAudit implements PatternInspection<JobQueueMetrics> {

    private final JobQueueConfig config;
    private final JobStore store;
    private final JobCounters counters;
    private final ServerClock clock;

    JobAudit(JobQueueConfig config, JobStore store, JobCounters counters, ServerClock clock) {
        this.config = config;
        this.store = store;
        this.counters = counters;
        this.clock = clock;
    }

    /** The job {@code id} and the documents its handler changed with {@code applyOnce}, as stored. */
    @Override
    public Optional<OperationView> describe(Object id) {
        Document job = store.read(id);
        if (job == null) {
            return Optional.empty();
        }
        List<OperationView.Touched> touched = new ArrayList<>();
        for (Object e : job.get(EFFECTS) instanceof List<?> effects ? effects : List.of()) {
            if (touched.size() < DESCRIBED_EFFECTS && e instanceof Document effect
                    && effect.get("c") instanceof String c && Names.isCollectionName(c)
                    && Ids.isDocumentId(effect.get("id"))) {
                touched.add(new OperationView.Touched(c, effect.get("id"), store.collection(c)
                        .find(eq("_id", effect.get("id"))).first(), "as stored: changed by the handler's applyOnce"));
            }
        }
        return Optional.of(new OperationView(id, String.valueOf(job.get(STATE)), job, touched));
    }

    /** The most documents {@link #describe} reads for one job. */
    private static final int DESCRIBED_EFFECTS = 50;

    /** Jobs done within the window, by the {@code retention} index ({@code state}, {@code completedAt}). */
    @Override
    public java.util.OptionalLong finishedSince(Duration window, int cap) {
        return java.util.OptionalLong.of(store.countDoneSince(clock.cutoff(window), cap));
    }

    /**
     * Dead jobs, in the order of the {@code due} index ({@code state}, {@code runAt}), skipping {@code skip}: each with
     * the error that killed it. Bounded by {@code skip + limit} index entries.
     */
    public List<InterruptedOperation> dead(int skip, int limit) {
        List<InterruptedOperation> out = new ArrayList<>();
        for (Document job : store.find(eq(STATE, JobState.DEAD.stored()), Sorts.ascending(RUN_AT), skip, limit,
                TYPE, ATTEMPTS, LAST_ERROR, LAST_MODIFIED,
                JobSchema.LINE_KEY)) {
            out.add(deadJob(job));
        }
        return out;
    }

    private InterruptedOperation deadJob(Document job) {
        Date at = job.getDate(LAST_MODIFIED);
        String error = job.getString(LAST_ERROR);
        return new InterruptedOperation(job.get("_id"), JobState.DEAD.stored(),
                at == null ? Duration.ZERO : clock.ageOf(at.toInstant()), "type " + job.getString(TYPE)
                + ", dead after " + job.get(ATTEMPTS) + " attempts (replayDead runs it again)"
                + (job.get(JobSchema.LINE_KEY) instanceof String key && key.startsWith(JobSchema.ORDER_LINE)
                ? ", blocks ordering key " + Values.show(key.substring(JobSchema.ORDER_LINE.length()))
                + " until replayed or discarded" : "")
                + (error == null ? "" : ", last error: " + Values.show(error)));
    }

    /** The jobs workers hold, longest held first, through the {@code processing_age} index: at most {@code limit}. */
    public List<RunningJob> running(int limit) {
        List<RunningJob> out = new ArrayList<>();
        for (Document job : store.find(eq(STATE, JobState.PROCESSING.stored()), Sorts.ascending(CLAIMED), 0, limit,
                TYPE, OWNER, CLAIMED, LEASE)) {
            Date claimed = job.getDate(CLAIMED);
            Date lease = job.getDate(LEASE);
            out.add(new RunningJob(job.get("_id"), String.valueOf(job.get(TYPE)), String.valueOf(job.get(OWNER)),
                    claimed == null ? Duration.ZERO : clock.ageOf(claimed.toInstant()),
                    lease == null ? Duration.ZERO : Duration.between(clock.now(), lease.toInstant())));
        }
        return out;
    }

    /**
     * Jobs a worker claimed and went quiet on: every {@code PROCESSING} job when {@code staleAfter} is zero, otherwise
     * those whose lease expired, as {@link JobRecovery#recover} requeues them. Queued jobs are waiting, not
     * interrupted.
     */
    @Override
    public List<InterruptedOperation> interrupted(Duration staleAfter, int limit) {
        Bson filter = staleAfter.isZero() ? eq(STATE, JobState.PROCESSING.stored())
                : and(eq(STATE, JobState.PROCESSING.stored()), lte(LEASE, Date.from(clock.now())));
        List<InterruptedOperation> out = new ArrayList<>();
        for (Document job : store.find(filter, Sorts.ascending(CLAIMED), 0, limit, TYPE, OWNER, CLAIMED,
                LAST_ERROR)) {
            Date claimed = job.getDate(CLAIMED);
            String error = job.getString(LAST_ERROR);
            out.add(new InterruptedOperation(job.get("_id"), JobState.PROCESSING.stored(),
                    claimed == null ? Duration.ZERO : clock.ageOf(claimed.toInstant()),
                    "type " + job.getString(TYPE) + ", claimed by " + job.get(OWNER)
                            + (error == null ? "" : ", last error: " + Values.show(error))));
        }
        // jobs a relayer recorded held and went quiet on: recovery releases or withdraws them (the held index)
        if (out.size() < limit) {
            Date cutoff = clock.cutoff(staleAfter);   // zero: every one, whatever the clock says
            for (Document job : store.heldBefore(cutoff, limit - out.size(), TYPE, JobSchema.HELD,
                    JobSchema.HELD_FROM, ENQUEUED)) {
                Date enqueued = job.getDate(ENQUEUED);
                Object from = job.get(JobSchema.HELD_FROM) instanceof Document f ? f.get("c") + " "
                        + Values.show(f.get("d")) : "unknown";
                out.add(new InterruptedOperation(job.get("_id"), "held",
                        enqueued == null ? Duration.ZERO : clock.ageOf(enqueued.toInstant()),
                        "type " + Values.show(job.get(TYPE)) + ", held by relayer "
                                + Values.show(job.get(JobSchema.HELD))
                                + " relaying the outbox of " + from));
            }
        }
        // dead jobs wait for an operator's replay: listed after the stuck ones, with the error that killed them
        // (a walk of the due index, {state, runAt}, bounded by what is left of the limit)
        if (out.size() < limit) {
            for (Document job : store.find(eq(STATE, JobState.DEAD.stored()), Sorts.ascending(RUN_AT), 0,
                    limit - out.size(), TYPE, ATTEMPTS, LAST_ERROR, LAST_MODIFIED,
                JobSchema.LINE_KEY)) {
                out.add(deadJob(job));
            }
        }
        return out;
    }

    /**
     * Counts per state from one snapshot ({@link StateSnapshot}), and the age of the oldest due job (the queue's lag),
     * else of the oldest claim.
     */
    @Override
    public StrategyStatus status() {
        StateSnapshot snapshot = store.snapshot();
        List<String> inFlight = JobState.IN_FLIGHT.stream().map(JobState::stored).toList();
        Optional<Duration> lag = oldestDueAge();
        if (lag.isEmpty()) {
            lag = snapshot.oldestOf(List.of(JobState.PROCESSING.stored())).map(clock::ageOf);
        }
        return new StrategyStatus(config.name(), snapshot.counts(), snapshot.sum(inFlight), lag);
    }

    /** How long the oldest due job has been waiting. */
    public Optional<Duration> oldestDueAge() {
        Document oldest = store.find(and(in(STATE, DUE_STATES), lte(RUN_AT, Date.from(clock.now()))),
                Sorts.ascending(RUN_AT), 0, 1, RUN_AT).stream().findFirst().orElse(null);
        return Optional.ofNullable(oldest).map(d -> clock.ageOf(d.getDate(RUN_AT).toInstant()));
    }

    /**
     * Jobs per type by where they stand: waiting and scheduled from two aggregations over the {@code due} index
     * ({@code state}, {@code runAt}), awaiting, running and dead from one each over its {@code state} prefix; each
     * reads at most {@code cap} jobs (the counts then say "at least").
     */
    public List<JobBacklog> backlog(int cap) {
        Date now = Date.from(clock.now());
        Map<String, long[]> counts = new java.util.TreeMap<>();
        Map<String, Date> oldest = new HashMap<>();
        List<Bson> filters = List.of(and(in(STATE, DUE_STATES), lte(RUN_AT, now)),
                and(in(STATE, DUE_STATES), Filters.gt(RUN_AT, now)), eq(STATE, JobState.AWAITING.stored()),
                eq(STATE, JobState.PROCESSING.stored()), eq(STATE, JobState.DEAD.stored()));
        for (int i = 0; i < filters.size(); i++) {
            int column = i;
            for (Document d : store.aggregate(List.of(
                    com.mongodb.client.model.Aggregates.match(filters.get(i)),
                    com.mongodb.client.model.Aggregates.limit(cap),
                    com.mongodb.client.model.Aggregates.group("$" + TYPE,
                            com.mongodb.client.model.Accumulators.sum("n", 1L),
                            com.mongodb.client.model.Accumulators.min("oldest", "$" + RUN_AT))))) {
                String type = String.valueOf(d.get("_id"));
                counts.computeIfAbsent(type, k -> new long[filters.size()])[column] = d.get("n") instanceof Number n
                        ? n.longValue() : 0;
                if (column == 0 && d.get("oldest") instanceof Date at) {
                    oldest.put(type, at);
                }
            }
        }
        List<JobBacklog> out = new ArrayList<>();
        counts.forEach((type, n) -> out.add(new JobBacklog(type, n[0], n[1], n[2], n[3], n[4],
                Optional.ofNullable(oldest.get(type)).map(at -> clock.ageOf(at.toInstant())))));
        return out;
    }

    /** Counts per state and type. */
    public Map<String, Map<String, Long>> countsByType() {
        Map<String, Map<String, Long>> counts = new HashMap<>();
        for (JobState s : JobState.values()) {
            for (Document d : store.aggregate(List.of(
                    com.mongodb.client.model.Aggregates.match(eq(STATE, s.stored())),
                    com.mongodb.client.model.Aggregates.group("$" + TYPE,
                            com.mongodb.client.model.Accumulators.sum("n", 1L))))) {
                counts.computeIfAbsent(s.stored(), k -> new HashMap<>()).put(String.valueOf(d.get("_id")),
                        ((Number) d.get("n")).longValue());
            }
        }
        return counts;
    }

    /** Held records older than {@code olderThan}: see {@link RecordReleases#kept}. */
    @Override
    public List<dev.consistencykit.core.KeptRecord> kept(Duration olderThan, int limit) {
        return store.kept(clock, clock.cutoff(olderThan), limit);
    }

    /** Dead jobs {@code which} selects, as {@link #dead(int, int)} lists them. */
    public List<InterruptedOperation> dead(DeadJobs which, int skip, int limit) {
        List<InterruptedOperation> out = new ArrayList<>();
        for (Document job : store.find(JobDeadLetters.deadFilter(config.name(), which, JobState.DEAD),
                Sorts.ascending(RUN_AT), skip, limit, TYPE, ATTEMPTS, LAST_ERROR, LAST_MODIFIED,
                JobSchema.LINE_KEY)) {
            out.add(deadJob(job));
        }
        return out;
    }

    /**
     * The jobs {@code which} selects, newest enqueued first, at most {@code limit}: by {@code _id} when it names ids,
     * else through {@code type_enqueued} when it names a type, else through {@code state_enqueued} (every state when it
     * names none).
     */
    public List<FoundJob> search(JobSearch which, int limit) {
        List<Bson> parts = new ArrayList<>();
        if (!which.ids().isEmpty()) {
            List<Object> ids = new ArrayList<>();
            for (OperationId id : which.ids()) {
                ids.add(Ids.operationId(config.name(), "id", id.value()));
            }
            parts.add(in("_id", ids));
        }
        which.type().ifPresent(t -> parts.add(eq(TYPE, t)));
        java.util.Collection<JobState> states = which.states().isEmpty() && which.ids().isEmpty()
                && which.type().isEmpty() ? java.util.EnumSet.allOf(JobState.class) : which.states();
        if (!states.isEmpty()) {
            parts.add(in(STATE, states.stream().map(JobState::stored).sorted().toList()));
        }
        which.enqueuedFrom().ifPresent(t -> parts.add(Filters.gte(ENQUEUED, Date.from(t))));
        which.enqueuedBefore().ifPresent(t -> parts.add(Filters.lt(ENQUEUED, Date.from(t))));
        List<FoundJob> out = new ArrayList<>();
        for (Document job : store.find(and(parts), Sorts.descending(ENQUEUED), 0, limit, TYPE, STATE, ENQUEUED,
                RUN_AT, ATTEMPTS, LAST_ERROR)) {
            Optional<JobState> state = known(job.get(STATE));
            if (state.isEmpty()) {
                continue;   // a state this version does not know (a document written by hand): not a job it shows
            }
            out.add(new FoundJob(job.get("_id"), String.valueOf(job.get(TYPE)), state.get(),
                    instant(job.get(ENQUEUED)), instant(job.get(RUN_AT)),
                    job.get(ATTEMPTS) instanceof Number n ? n.intValue() : 0,
                    Optional.ofNullable(job.get(LAST_ERROR) instanceof String e ? e : null)));
        }
        return out;
    }

    private static Optional<JobState> known(Object stored) {
        for (JobState s : JobState.values()) {
            if (s.stored().equals(stored)) {
                return Optional.of(s);
            }
        }
        return Optional.empty();
    }

    private static Optional<java.time.Instant> instant(Object value) {
        return value instanceof Date d ? Optional.of(d.toInstant()) : Optional.empty();
    }

    /** The counters since this instance was built. */
    @Override
    public JobQueueMetrics metrics() {
        return counters.read();
    }
}
