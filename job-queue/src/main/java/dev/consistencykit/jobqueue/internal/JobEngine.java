package dev.consistencykit.jobqueue.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lte;
import static dev.consistencykit.jobqueue.internal.JobFields.ATTEMPTS;
import static dev.consistencykit.jobqueue.internal.JobFields.CLAIMED;
import static dev.consistencykit.jobqueue.internal.JobFields.COMPLETED;
import static dev.consistencykit.jobqueue.internal.JobFields.DUE_STATES;
import static dev.consistencykit.jobqueue.internal.JobFields.EFFECTS;
import static dev.consistencykit.jobqueue.internal.JobFields.EFFECT_MARKER;
import static dev.consistencykit.jobqueue.internal.JobFields.ENQUEUED;
import static dev.consistencykit.jobqueue.internal.JobFields.LAST_ERROR;
import static dev.consistencykit.jobqueue.internal.JobFields.LAST_MODIFIED;
import static dev.consistencykit.jobqueue.internal.JobFields.LOG;
import static dev.consistencykit.jobqueue.internal.JobFields.LEASE;
import static dev.consistencykit.jobqueue.internal.JobFields.MAX_ATTEMPTS;
import static dev.consistencykit.jobqueue.internal.JobFields.OUTBOX_NONCE;
import static dev.consistencykit.jobqueue.internal.JobFields.OWNER;
import static dev.consistencykit.jobqueue.internal.JobFields.PAYLOAD;
import static dev.consistencykit.jobqueue.internal.JobFields.PRIORITY;
import static dev.consistencykit.jobqueue.internal.JobFields.RUN_AT;
import static dev.consistencykit.jobqueue.internal.JobFields.STATE;
import static dev.consistencykit.jobqueue.internal.JobFields.TOKEN;
import static dev.consistencykit.jobqueue.internal.JobFields.TYPE;
import static dev.consistencykit.jobqueue.internal.JobFields.UNSETTLED;
import static dev.consistencykit.jobqueue.internal.JobRunner.errorText;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.ReadPreference;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.OperationView;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.core.spi.Claim;
import dev.consistencykit.core.spi.ConditionalUpdates;
import dev.consistencykit.core.spi.GuardedResult;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.Names;
import dev.consistencykit.core.spi.OnceEffects;
import dev.consistencykit.core.spi.PatternRegistry;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.core.spi.StateSnapshot;
import dev.consistencykit.core.spi.PatternInspection;
import dev.consistencykit.core.spi.PatternRecovery;
import dev.consistencykit.core.spi.PatternSetup;
import dev.consistencykit.core.spi.Transition;
import dev.consistencykit.core.spi.UpdateOutcome;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.jobqueue.DeadJobs;
import dev.consistencykit.jobqueue.JobBacklog;
import dev.consistencykit.jobqueue.JobHandler;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobQueueListener;
import dev.consistencykit.jobqueue.JobQueueMetrics;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.jobqueue.JobState;

/**
 * The job queue's state machine.
 *
 * <p>A job is recorded by one upsert whose filter never matches an existing document, so a reused id or dedupe key is
 * a duplicate-key error, resolved by comparing the stored job. A worker claims the highest-priority due job with one
 * {@code findOneAndUpdate} that sets it {@code PROCESSING}, counts the attempt, sets owner and lease and increments
 * the fencing token. Completing, failing, heartbeating and releasing all carry that token, so a worker whose lease
 * was taken over cannot mark the job; its handler's effects are kept to one per job by {@code appliedJobs} markers.
 * The sweeper requeues (or, on the last attempt, kills) jobs whose lease expired, bumping the token.
 */
public final class JobEngine implements PatternSetup, PatternRecovery, PatternInspection<JobQueueMetrics> {

    /** The field of a business document that carries its outbox entries. */
    public static final String OUTBOX = JobFields.OUTBOX;
    /** The fields this queue keeps on business documents: no caller's update may touch them. */
    public static final Set<String> EFFECT_FIELDS = JobFields.EFFECT_FIELDS;

    /** A validated job in stored form (everything but the server-stamped times). */
    public record Encoded(Object id, Document fields, Duration delay) {

        OperationId operationId() {
            return new OperationId(id);
        }
    }

    /** A claimed job. */
    public record Claimed(Claim claim, Document job) {

        Object id() {
            return job.get("_id");
        }
    }

    /** Where running a job left it, with the error text of a failed or dead job ({@code null} otherwise). */
    public record Ran(Object id, JobState state, boolean lostLease, String error) {

        /** What the run came to, as a result: done committed, dead aborted, failed (to be retried) in flight. */
        public OperationResult result() {
            return toResult(this, null);
        }
    }

    private final JobFields fields;
    private final JobRecording recording;
    private final JobOutbox outbox;
    private final JobRunner runner;
    private final JobRecovery recovery;

    /**
     * The engine over {@code database} (already checked for an acknowledged write concern): the shared fields, the
     * recording of jobs, the outbox on business documents with its relay, the claiming and running of jobs with their
     * effects, and recovery.
     */
    public JobEngine(JobQueueConfig config, MongoDatabase database, ServerClock clock, JobQueueListener listener,
                     Supplier<String> ownerIds, Map<String, JobHandler> handlers) {
        this.fields = new JobFields(config, database, clock, listener, ownerIds, handlers);
        this.recording = new JobRecording(fields);
        this.outbox = new JobOutbox(fields, recording);
        this.runner = new JobRunner(fields);
        this.recovery = new JobRecovery(fields, runner, outbox);
    }

    /** The application's listener. */
    public JobQueueListener listener() {
        return fields.listener();
    }

    /** The fresh owner name for one worker. */
    public String newOwner() {
        return fields.newOwner();
    }

    // ---------------------------------------------------------------- recording and the outbox

    /** Validates {@code job}; nothing is written. */
    public Encoded encode(JobRequest job) {
        return recording.encode(job);
    }

    /** Records {@code job} (one write); a repeat with the same content returns the existing job's id. */
    public OperationId enqueue(Encoded job) {
        return recording.enqueue(job);
    }

    /**
     * Applies {@code businessUpdate} to one business document together with the job, pushed into its outbox in the
     * same atomic write, exactly once however the call's requests are retried; then relays it.
     *
     * @return the job's id if this call (or an earlier call with the same job id) wrote it; empty if the business
     *         document is missing or its filter did not match, in which case nothing was written
     */
    public Optional<OperationId> enqueueWith(MongoCollection<Document> business, Object documentId,
                                             Bson businessFilter, Bson businessUpdate, Encoded job) {
        return outbox.enqueueWith(business, documentId, businessFilter, businessUpdate, job);
    }

    /**
     * Inserts {@code document} (whose {@code _id} is {@code documentId}) carrying {@code jobs} in its outbox, one
     * atomic write, then relays them.
     *
     * @return the jobs' ids; empty if a document with that id exists that this call did not write
     */
    public Optional<List<OperationId>> insertWith(MongoCollection<Document> business, Object documentId,
                                                  BsonDocument document, List<Encoded> jobs) {
        return outbox.insertWith(business, documentId, document, jobs);
    }

    /**
     * Upserts document {@code documentId} with {@code job} in its outbox: an update as {@link #enqueueWith} when it
     * exists, an insert otherwise; exactly once.
     *
     * @return the job's id; empty if the document exists and did not match {@code businessFilter}
     */
    public Optional<OperationId> upsertWith(MongoCollection<Document> business, Object documentId,
                                            Bson businessFilter, Bson businessUpdate, Encoded job) {
        return outbox.upsertWith(business, documentId, businessFilter, businessUpdate, job);
    }

    /** Moves the jobs in {@code documentId}'s outbox into the queue; returns the jobs moved. */
    public int relay(MongoCollection<Document> business, Object documentId) {
        return outbox.relay(business, documentId);
    }

    /**
     * Relays every business document of {@code business} that carries outboxed jobs, after releasing the outbox
     * reservations of calls this instance has seen hold theirs for {@code staleAfter} without writing.
     */
    public int relayAll(MongoCollection<Document> business, Duration staleAfter) {
        return outbox.relayAll(business, staleAfter);
    }

    // ---------------------------------------------------------------- claiming and running

    /** Claims the highest-priority due job, or the given one. */
    public Optional<Claimed> claim(String owner, Object onlyId) {
        return runner.claim(owner, onlyId);
    }

    /** Runs a claimed job's handler and records the outcome, fenced by the claim's token. */
    public Ran run(Claimed claimed) {
        return runner.run(claimed);
    }

    /** Renews a claimed job's lease. */
    public void heartbeat(Claimed claimed) {
        runner.heartbeat(claimed);
    }

    /** Gives a claimed job back (graceful shutdown): {@code TODO} again, due now, the attempt not counted. */
    public boolean release(Claimed claimed) {
        return runner.release(claimed);
    }

    // ---------------------------------------------------------------- recovery

    /**
     * Requeues every {@code PROCESSING} job whose lease expired (every one, when {@code all}), or sends it dead if that
     * was its last attempt.
     *
     * @return {@code [requeued, dead, skipped]}
     */
    public JobRecovery.Swept sweep(JobRecovery.Leases which) {
        return recovery.sweep(which);
    }

    /**
     * Requeues jobs whose worker went quiet, then runs, in this thread, every job that has been due for
     * {@code staleAfter}.
     */
    @Override
    public RecoveryReport recover(Duration staleAfter) {
        return recovery.recover(staleAfter);
    }

    /**
     * {@link #recover(Duration)} for the job {@code id} alone, as {@link #interrupted} lists it: requeued (or dead, on
     * its last attempt) when its lease expired (zero: whatever its lease), for the workers to run.
     */
    @Override
    public RecoveryReport recoverOne(Object id, Duration staleAfter) {
        long start = System.nanoTime();
        fields.releases.flush();
        JobRecovery.Swept swept = recovery.sweep(staleAfter.isZero() ? JobRecovery.Leases.ALL
                : JobRecovery.Leases.EXPIRED, id);
        // as JobQueue.requeue counts: requeued is rolled back (for the workers), killed on its last attempt set aside
        return new RecoveryReport(fields.config.name(), swept.examined(), 0, swept.requeued(), swept.skipped(),
                Duration.ofNanos(System.nanoTime() - start), swept.dead());
    }

    /** The job {@code id} and the documents its handler changed with {@code applyOnce}, as stored. */
    @Override
    public Optional<OperationView> describe(Object id) {
        Document job = fields.jobs.find(eq("_id", id)).first();
        if (job == null) {
            return Optional.empty();
        }
        List<OperationView.Touched> touched = new ArrayList<>();
        for (Object e : job.get(EFFECTS) instanceof List<?> effects ? effects : List.of()) {
            if (touched.size() < DESCRIBED_EFFECTS && e instanceof Document effect
                    && effect.get("c") instanceof String c && Names.isCollectionName(c)
                    && Ids.isDocumentId(effect.get("id"))) {
                touched.add(new OperationView.Touched(c, effect.get("id"), fields.database.getCollection(c)
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
        return java.util.OptionalLong.of(fields.jobs.countDocuments(and(eq(STATE, JobState.DONE.stored()),
                com.mongodb.client.model.Filters.gt(COMPLETED, fields.clock.cutoff(window))),
                new com.mongodb.client.model.CountOptions().limit(cap)));
    }

    /**
     * Dead jobs, in the order of the {@code due} index ({@code state}, {@code runAt}), skipping {@code skip}: each with
     * the error that killed it. Bounded by {@code skip + limit} index entries.
     */
    public List<InterruptedOperation> dead(int skip, int limit) {
        List<InterruptedOperation> out = new ArrayList<>();
        for (Document job : fields.jobs.find(eq(STATE, JobState.DEAD.stored())).projection(Projections.include(TYPE,
                ATTEMPTS, LAST_ERROR, LAST_MODIFIED)).sort(Sorts.ascending(RUN_AT)).skip(skip).limit(limit)) {
            out.add(deadJob(job));
        }
        return out;
    }

    private InterruptedOperation deadJob(Document job) {
        Date at = job.getDate(LAST_MODIFIED);
        String error = job.getString(LAST_ERROR);
        return new InterruptedOperation(job.get("_id"), JobState.DEAD.stored(),
                at == null ? Duration.ZERO : fields.clock.ageOf(at.toInstant()), "type " + job.getString(TYPE)
                + ", dead after " + job.get(ATTEMPTS) + " attempts (replayDead runs it again)"
                + (error == null ? "" : ", last error: " + Values.show(error)));
    }

    // ---------------------------------------------------------------- entry points

    /** Enqueues {@code job} and runs it in this thread when it is due and free. */
    public OperationResult apply(Encoded job) {
        OperationId id = enqueue(job);
        Optional<Claimed> claimed = claim(newOwner(), id.value());
        if (claimed.isPresent()) {
            return toResult(run(claimed.get()));
        }
        Document now = fields.jobs.withReadPreference(ReadPreference.primary()).find(eq("_id", id.value())).first();
        JobState state = now == null ? JobState.TODO : JobState.fromStored(now.getString(STATE));
        return toResult(new Ran(id.value(), state, false, now == null ? null : now.getString(LAST_ERROR)), now);
    }

    OperationResult toResult(Ran ran) {
        Document now = ran.error() == null && (ran.state() == JobState.DEAD || ran.state() == JobState.FAILED)
                ? fields.jobs.withReadPreference(ReadPreference.primary()).find(eq("_id", ran.id())).first() : null;
        return toResult(ran, now);
    }

    /** The common result; a failed or dead job's carries its error text as the reason. */
    static OperationResult toResult(Ran ran, Document job) {
        OperationId id = new OperationId(ran.id());
        String error = ran.error() != null ? ran.error() : job == null ? null : job.getString(LAST_ERROR);
        return switch (ran.state()) {
            case DONE -> OperationResult.committed(id, JobState.DONE.stored());
            case DEAD -> OperationResult.aborted(id, JobState.DEAD.stored(), error == null ? "dead" : error);
            case FAILED -> new OperationResult(id, OperationResult.Outcome.IN_FLIGHT, JobState.FAILED.stored(),
                    Optional.ofNullable(error));
            default -> OperationResult.inFlight(id, ran.state().stored());
        };
    }

    /**
     * A failed attempt, counted, for a job whose worker thread died of {@code error} (an {@link Error} from its
     * handler, which the library never catches): the job backs off, then dies after its last attempt, instead of
     * being claimed again at once for ever.
     */
    public Ran died(Claimed claimed, Throwable error) {
        return runner.fail(claimed, "the worker running it died: " + errorText(error));
    }

    /** Claims and runs one due job. */
    public Optional<OperationResult> processNext(String owner) {
        return claim(owner, null).map(this::run).map(this::toResult);
    }

    // ---------------------------------------------------------------- status, retention, replay, indexes

    /**
     * Jobs a worker claimed and went quiet on: every {@code PROCESSING} job when {@code staleAfter} is zero, otherwise
     * those whose lease expired, as {@link #recover} requeues them. Queued jobs are waiting, not interrupted.
     */
    @Override
    public List<InterruptedOperation> interrupted(Duration staleAfter, int limit) {
        Bson filter = staleAfter.isZero() ? eq(STATE, JobState.PROCESSING.stored())
                : and(eq(STATE, JobState.PROCESSING.stored()), lte(LEASE, Date.from(fields.clock.now())));
        List<InterruptedOperation> out = new ArrayList<>();
        for (Document job : fields.jobs.find(filter).projection(Projections.include(TYPE, OWNER, CLAIMED, LAST_ERROR))
                .sort(Sorts.ascending(CLAIMED)).limit(limit)) {
            Date claimed = job.getDate(CLAIMED);
            String error = job.getString(LAST_ERROR);
            out.add(new InterruptedOperation(job.get("_id"), JobState.PROCESSING.stored(),
                    claimed == null ? Duration.ZERO : fields.clock.ageOf(claimed.toInstant()),
                    "type " + job.getString(TYPE) + ", claimed by " + job.get(OWNER)
                            + (error == null ? "" : ", last error: " + Values.show(error))));
        }
        // jobs a relayer recorded held and went quiet on: recovery releases or withdraws them (the held index)
        if (out.size() < limit) {
            Date cutoff = staleAfter.isZero() ? Date.from(fields.clock.now().plusSeconds(1))
                    : fields.clock.cutoff(staleAfter);
            for (Document job : fields.jobs.find(and(exists(JobFields.HELD, true), lte(ENQUEUED, cutoff)))
                    .projection(Projections.include(TYPE, JobFields.HELD, JobFields.HELD_FROM, ENQUEUED))
                    .limit(limit - out.size())) {
                Date enqueued = job.getDate(ENQUEUED);
                Object from = job.get(JobFields.HELD_FROM) instanceof Document f ? f.get("c") + " "
                        + Values.show(f.get("d")) : "unknown";
                out.add(new InterruptedOperation(job.get("_id"), "held",
                        enqueued == null ? Duration.ZERO : fields.clock.ageOf(enqueued.toInstant()),
                        "type " + Values.show(job.get(TYPE)) + ", held by relayer " + Values.show(job.get(JobFields.HELD))
                                + " relaying the outbox of " + from));
            }
        }
        // dead jobs wait for an operator's replay: listed after the stuck ones, with the error that killed them
        // (a walk of the due index, {state, runAt}, bounded by what is left of the limit)
        if (out.size() < limit) {
            for (Document job : fields.jobs.find(eq(STATE, JobState.DEAD.stored())).projection(Projections.include(TYPE,
                    ATTEMPTS, LAST_ERROR, LAST_MODIFIED)).sort(Sorts.ascending(RUN_AT)).limit(limit - out.size())) {
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
        StateSnapshot snapshot = StateSnapshot.of(fields.jobs, STATE, CLAIMED);
        List<String> inFlight = JobState.IN_FLIGHT.stream().map(JobState::stored).toList();
        Optional<Duration> lag = oldestDueAge();
        if (lag.isEmpty()) {
            lag = snapshot.oldestOf(List.of(JobState.PROCESSING.stored())).map(fields.clock::ageOf);
        }
        return new StrategyStatus(fields.config.name(), snapshot.counts(), snapshot.sum(inFlight), lag);
    }

    /** How long the oldest due job has been waiting. */
    public Optional<Duration> oldestDueAge() {
        Document oldest = fields.jobs.find(and(in(STATE, DUE_STATES), lte(RUN_AT, Date.from(fields.clock.now()))))
                .projection(Projections.include(RUN_AT)).sort(Sorts.ascending(RUN_AT)).first();
        return Optional.ofNullable(oldest).map(d -> fields.clock.ageOf(d.getDate(RUN_AT).toInstant()));
    }

    /**
     * Waiting and scheduled jobs per type: two aggregations over the {@code due} index ({@code state}, {@code runAt}),
     * each reading at most {@code cap} jobs (the counts then say "at least").
     */
    public List<JobBacklog> backlog(int cap) {
        Date now = Date.from(fields.clock.now());
        Map<String, long[]> counts = new java.util.TreeMap<>();
        Map<String, Date> oldest = new HashMap<>();
        for (boolean due : new boolean[] {true, false}) {
            for (Document d : fields.jobs.aggregate(List.of(
                    com.mongodb.client.model.Aggregates.match(and(in(STATE, DUE_STATES), due ? lte(RUN_AT, now)
                            : Filters.gt(RUN_AT, now))),
                    com.mongodb.client.model.Aggregates.limit(cap),
                    com.mongodb.client.model.Aggregates.group("$" + TYPE,
                            com.mongodb.client.model.Accumulators.sum("n", 1L),
                            com.mongodb.client.model.Accumulators.min("oldest", "$" + RUN_AT))))) {
                String type = String.valueOf(d.get("_id"));
                counts.computeIfAbsent(type, k -> new long[2])[due ? 0 : 1] = ((Number) d.get("n")).longValue();
                if (due && d.get("oldest") instanceof Date at) {
                    oldest.put(type, at);
                }
            }
        }
        List<JobBacklog> out = new ArrayList<>();
        counts.forEach((type, n) -> out.add(new JobBacklog(type, n[0], n[1], Optional.ofNullable(oldest.get(type))
                .map(at -> fields.clock.ageOf(at.toInstant())))));
        return out;
    }

    /** Counts per state and type. */
    public Map<String, Map<String, Long>> countsByType() {
        Map<String, Map<String, Long>> counts = new HashMap<>();
        for (JobState s : JobState.values()) {
            for (Document d : fields.jobs.aggregate(List.of(
                    com.mongodb.client.model.Aggregates.match(eq(STATE, s.stored())),
                    com.mongodb.client.model.Aggregates.group("$" + TYPE,
                            com.mongodb.client.model.Accumulators.sum("n", 1L))))) {
                counts.computeIfAbsent(s.stored(), k -> new HashMap<>()).put(String.valueOf(d.get("_id")),
                        ((Number) d.get("n")).longValue());
            }
        }
        return counts;
    }

    /**
     * Deletes {@code DONE} jobs completed more than {@code retention} ago whose effects are settled and whose recorder
     * released them ({@link RecordReleases}), and, relayed from an outbox, whose outbox call released them, after
     * releasing those this instance recorded or wrote by an outbox call.
     */
    public long prune(Duration retention) {
        fields.releases.flush();
        fields.outboxHolds.flush();
        // a job its recorder has not released may still be written again by that recorder's retry: kept
        Bson past = and(in(STATE, JobState.DONE.stored(), JobState.DISCARDED.stored()), lte(COMPLETED, fields.clock.cutoff(retention)),
                exists(UNSETTLED, false));
        long n = fields.config.retryPolicy().execute(fields.config.name(), null, "prune", () -> fields.jobs
                .deleteMany(and(past, RecordReleases.released(), exists(OUTBOX_NONCE, false))).getDeletedCount());
        fields.pruned.add(n);
        // still held: only what a late retry of the enqueue (or of the outbox call) reads is kept
        long compacted = fields.config.retryPolicy().execute(fields.config.name(), null, "compact held jobs",
                () -> RecordReleases.compact(fields.jobs, past, List.of(RecordReleases.FIELD, OUTBOX_NONCE),
                        COMPACTED_AWAY));
        if (compacted > 0) {
            LOG.info("[{}] compacted {} done jobs past their retention that their writers still hold",
                    fields.config.name(), compacted);
        }
        return n;
    }

    /**
     * What compaction removes from a held done job: all but its id, state, type, dedupe key, times and holds, which is
     * what a late retry of its enqueue reads.
     */
    static final List<String> COMPACTED_AWAY = List.of(PAYLOAD, PRIORITY, RUN_AT, ATTEMPTS, MAX_ATTEMPTS, LAST_ERROR,
            OWNER, CLAIMED, LEASE, TOKEN, EFFECTS);

    /** Held records older than {@code olderThan}: see {@link RecordReleases#kept}. */
    @Override
    public List<dev.consistencykit.core.KeptRecord> kept(Duration olderThan, int limit) {
        return RecordReleases.kept(fields.jobs, ENQUEUED, fields.clock, fields.clock.cutoff(olderThan), limit);
    }

    /** Releases the jobs this instance recorded, and those it wrote by an outbox call, that it still holds. */
    @Override
    public void close() {
        fields.releases.flush();
        fields.outboxHolds.flush();
    }

    // ---------------------------------------------------------------- dead letters

    /** Puts a dead job back in the queue: {@code TODO}, due now, attempts from zero. */
    public boolean replay(Object id) {
        Ids.operationId(fields.config.name(), "id", id);
        GuardedResult r = fields.config.retryPolicy().execute(fields.config.name(), id, "replay",
                () -> ConditionalUpdates.transition(fields.jobs, id, Transition.of(STATE, JobState.DEAD.stored(),
                        JobState.TODO.stored()).alsoUpdating(replayUpdate())));
        return r.outcome() == UpdateOutcome.APPLIED;
    }

    private Bson replayUpdate() {
        return Updates.combine(Updates.set(ATTEMPTS, 0), Updates.set(RUN_AT, Date.from(fields.clock.now())),
                Updates.inc(TOKEN, 1L));
    }

    /**
     * Puts every dead job {@code which} selects back in the queue, in one write: each job moves only while it is dead
     * (the filter is the guard), so a job a worker, a discard or another replay moved first is left as it is. A retry
     * of the write after a lost reply replays only jobs still dead then.
     *
     * @return the jobs replayed by this call's last write
     */
    public long replay(DeadJobs which) {
        Bson filter = deadFilter(which, JobState.DEAD);
        return fields.config.retryPolicy().execute(fields.config.name(), null, "replay " + which,
                () -> fields.jobs.updateMany(filter, Updates.combine(Updates.set(STATE, JobState.TODO.stored()),
                        Updates.currentDate(LAST_MODIFIED), replayUpdate())).getModifiedCount());
    }

    /**
     * Discards every dead job {@code which} selects: each moves from {@code DEAD} to {@code DISCARDED} by a
     * compare-and-set (a job replayed first is left running), then the marks of the effects it applied are settled off
     * their documents (recovery settles what a crash between the two leaves, as for a done job).
     *
     * @return the jobs this call discarded
     */
    public long discard(DeadJobs which) {
        Bson filter = deadFilter(which, JobState.DEAD);
        long discarded = 0;
        while (true) {
            List<Document> batch = fields.config.retryPolicy().execute(fields.config.name(), null, "find " + which,
                    () -> fields.jobs.find(filter).projection(Projections.include(EFFECTS)).sort(Sorts.ascending(
                            RUN_AT)).limit(DISCARD_BATCH).into(new ArrayList<>()));
            long before = discarded;
            for (Document job : batch) {
                if (discardOne(job)) {
                    discarded++;
                }
            }
            // each job found left DEAD (discarded here or moved by another), so the next find reads new ones only;
            // a batch of which none was ours means others are acting on the same jobs: theirs to finish
            if (batch.size() < DISCARD_BATCH || discarded == before) {
                return discarded;
            }
        }
    }

    private static final int DISCARD_BATCH = 100;

    private boolean discardOne(Document job) {
        Object id = job.get("_id");
        boolean effects = !job.getList(EFFECTS, Object.class, List.of()).isEmpty();
        Bson update = Updates.combine(Updates.currentDate(COMPLETED), effects ? Updates.set(UNSETTLED, true)
                : Updates.unset(UNSETTLED));
        GuardedResult r = fields.config.retryPolicy().execute(fields.config.name(), id, "discard",
                () -> ConditionalUpdates.transition(fields.jobs, id, Transition.of(STATE, JobState.DEAD.stored(),
                        JobState.DISCARDED.stored()).alsoUpdating(update)));
        boolean ours = r.outcome() == UpdateOutcome.APPLIED;
        if (ours) {
            LOG.info("[{}] discarded dead job {}", fields.config.name(), Values.show(id));
        }
        if (effects && (ours || r.document().map(d -> JobState.DISCARDED.stored().equals(d.getString(STATE)))
                .orElse(false))) {
            runner.settleEffects(id, job);
        }
        return ours;
    }

    /**
     * Deletes the dead and discarded jobs {@code which} selects: dead ones are discarded first (their marks settled),
     * then each discarded job whose marks are settled is deleted, unless the process that wrote it still holds it
     * ({@link RecordReleases}): such a job is compacted to what a late retry of its enqueue reads, and pruned once
     * released.
     *
     * @return the jobs deleted or compacted
     */
    public long delete(DeadJobs which) {
        discard(which);
        Bson removable = and(deadFilter(which, JobState.DISCARDED), exists(UNSETTLED, false),
                exists(RecordReleases.COMPACTED, false));
        long deleted = fields.config.retryPolicy().execute(fields.config.name(), null, "delete " + which,
                () -> fields.jobs.deleteMany(and(removable, RecordReleases.released(), exists(OUTBOX_NONCE, false)))
                        .getDeletedCount());
        long compacted = fields.config.retryPolicy().execute(fields.config.name(), null, "compact " + which,
                () -> RecordReleases.compact(fields.jobs, removable, List.of(RecordReleases.FIELD, OUTBOX_NONCE),
                        COMPACTED_AWAY));
        if (deleted + compacted > 0) {
            LOG.info("[{}] deleted {} {} ({} of them compacted until their writers release them)",
                    fields.config.name(), deleted + compacted, which, compacted);
        }
        return deleted + compacted;
    }

    /** Dead jobs {@code which} selects, as {@link #dead(int, int)} lists them. */
    public List<InterruptedOperation> dead(DeadJobs which, int skip, int limit) {
        List<InterruptedOperation> out = new ArrayList<>();
        for (Document job : fields.jobs.find(deadFilter(which, JobState.DEAD)).projection(Projections.include(TYPE,
                ATTEMPTS, LAST_ERROR, LAST_MODIFIED)).sort(Sorts.ascending(RUN_AT)).skip(skip).limit(limit)) {
            out.add(deadJob(job));
        }
        return out;
    }

    /** The filter of {@code which}, on jobs in {@code state}; every value is matched as a literal. */
    private Bson deadFilter(DeadJobs which, JobState state) {
        List<Bson> parts = new ArrayList<>();
        parts.add(eq(STATE, state.stored()));
        which.type().ifPresent(t -> parts.add(eq(TYPE, t)));
        which.errorContaining().ifPresent(t -> parts.add(Filters.regex(LAST_ERROR, literalRegex(t))));
        if (!which.ids().isEmpty()) {
            List<Object> ids = new ArrayList<>();
            for (OperationId id : which.ids()) {
                ids.add(Ids.operationId(fields.config.name(), "id", id.value()));
            }
            parts.add(in("_id", ids));
        }
        return and(parts);
    }

    /** {@code text} as a regular expression matching exactly it: every character but letters and digits escaped. */
    static String literalRegex(String text) {
        StringBuilder out = new StringBuilder(text.length() * 2);
        text.codePoints().forEach(c -> {
            if (!Character.isLetterOrDigit(c) && c != ' ' && c < 128) {
                out.append('\\');
            }
            out.appendCodePoint(c);
        });
        return out.toString();
    }

    /** Creates the indexes the queue's queries need on a real server. */
    @Override
    public void ensureIndexes() {
        fields.jobs.createIndex(Indexes.compoundIndex(Indexes.ascending(STATE), Indexes.descending(PRIORITY),
                Indexes.ascending(RUN_AT)), new IndexOptions().name("claim_order"));
        fields.jobs.createIndex(Indexes.ascending(STATE, RUN_AT), new IndexOptions().name("due"));
        fields.jobs.createIndex(Indexes.ascending(STATE, LEASE), new IndexOptions().name("lease_expiry"));
        fields.jobs.createIndex(Indexes.ascending(STATE, COMPLETED), new IndexOptions().name("retention"));
        fields.jobs.createIndex(Indexes.ascending(STATE, CLAIMED), new IndexOptions().name("processing_age"));
        fields.requiredIndexes.create();
        fields.jobs.createIndex(Indexes.ascending(EFFECTS + ".c"), new IndexOptions().name("effect_collections")
                .sparse(true));
        fields.jobs.createIndex(Indexes.ascending(UNSETTLED), new IndexOptions().name("unsettled").sparse(true));
        fields.jobs.createIndex(Indexes.ascending(JobFields.HELD), new IndexOptions().name("held").sparse(true));
        RecordReleases.ensureIndex(fields.jobs);
        for (String name : fields.effectCollections()) {
            ensureEffectIndexes(fields.database.getCollection(name));
        }
        PatternRegistry.register(fields.database, new PatternRegistry.Registration("job-queue", fields.config.name(),
                Map.of("jobs", fields.config.collection()), Map.of()));
    }

    /** The index a business collection's outbox relay needs. */
    public static void ensureOutboxIndex(MongoCollection<Document> business) {
        business.createIndex(Indexes.ascending(OUTBOX + "._id"), new IndexOptions().name("job_outbox").sparse(true));
        OnceEffects.ensureIndex(business, JobFields.OUTBOX_MARKER);
    }

    /** The index recovery's release of abandoned reservations needs on a collection handlers change. */
    public static void ensureEffectIndexes(MongoCollection<Document> target) {
        OnceEffects.ensureIndex(target, EFFECT_MARKER);
    }

    /** The metrics snapshot. */
    @Override
    public JobQueueMetrics metrics() {
        return new JobQueueMetrics(fields.enqueued.sum(), fields.done.sum(), fields.failed.sum(), fields.dead.sum(),
                fields.requeued.sum(),
                fields.leaseLost.sum(), fields.relayed.sum(), fields.pruned.sum());
    }

    /** The registered job types. */
    public Set<String> types() {
        return fields.handlers.keySet();
    }


    @Override
    public List<String> setupProblems() {
        return fields.requiredIndexes.problems();
    }
}
