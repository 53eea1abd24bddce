package dev.consistencykit.jobqueue.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.lte;
import static dev.consistencykit.jobqueue.internal.JobSchema.ATTEMPTS;
import static dev.consistencykit.jobqueue.internal.JobSchema.CLAIMED;
import static dev.consistencykit.jobqueue.internal.JobSchema.CLAIM_AT;
import static dev.consistencykit.jobqueue.internal.JobSchema.COMPLETED;
import static dev.consistencykit.jobqueue.internal.JobSchema.EFFECTS;
import static dev.consistencykit.jobqueue.internal.JobSchema.EFFECT_FIELDS;
import static dev.consistencykit.jobqueue.internal.JobSchema.EFFECT_MARKER;
import static dev.consistencykit.jobqueue.internal.JobSchema.HELD;
import static dev.consistencykit.jobqueue.internal.JobSchema.LAST_ERROR;
import static dev.consistencykit.jobqueue.internal.JobSchema.LEASE;
import static dev.consistencykit.jobqueue.internal.JobSchema.LEASE_FIELDS;
import static dev.consistencykit.jobqueue.internal.JobSchema.MAX_ATTEMPTS;
import static dev.consistencykit.jobqueue.internal.JobSchema.OWNER;
import static dev.consistencykit.jobqueue.internal.JobSchema.PAYLOAD;
import static dev.consistencykit.jobqueue.internal.JobSchema.RUN_AT;
import static dev.consistencykit.jobqueue.internal.JobSchema.STATE;
import static dev.consistencykit.jobqueue.internal.JobSchema.TOKEN;
import static dev.consistencykit.jobqueue.internal.JobSchema.TYPE;
import static dev.consistencykit.jobqueue.internal.JobSchema.UNSETTLED;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.PushOptions;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.LeaseLostException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.ConditionalUpdates;
import dev.consistencykit.core.spi.EffectMarker;
import dev.consistencykit.core.spi.GuardedResult;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.IncOperands;
import dev.consistencykit.core.spi.IncOverflow;
import dev.consistencykit.core.spi.MarkerWrite;
import dev.consistencykit.core.spi.Names;
import dev.consistencykit.core.spi.OnceEffects;
import dev.consistencykit.core.spi.UpdateGrammar;
import dev.consistencykit.core.spi.UpdateOutcome;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.jobqueue.EffectRefusedException;
import dev.consistencykit.jobqueue.EffectTargetMissingException;
import dev.consistencykit.jobqueue.JobContext;
import dev.consistencykit.jobqueue.JobHandler;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobState;

/**
 * Claiming and running a job: the lease and fencing token, the handler's apply-once effects, completion.
 */
public final class JobRunner {

    private static final Logger LOG = LoggerFactory.getLogger(JobRunner.class);

    private final JobQueueConfig config;
    private final JobStore store;
    private final JobRecording recording;
    private final Map<String, JobHandler> handlers;
    private final ServerClock clock;
    private final JobHooks hooks;
    private final Supplier<String> ownerIds;
    private final FailureLog failures;

    /**
     * The claiming and running of jobs by {@code handlers}, through the store; leases run on {@code clock}; the
     * features' {@code hooks} are told of each outcome it records (a key's line moves on, the listener hears).
     */
    JobRunner(JobQueueConfig config, JobStore store, JobRecording recording, Map<String, JobHandler> handlers,
              JobHooks hooks, ServerClock clock, Supplier<String> ownerIds) {
        this.config = config;
        this.store = store;
        this.recording = recording;
        this.handlers = Map.copyOf(handlers);
        this.clock = clock;
        this.hooks = hooks;
        this.ownerIds = ownerIds;
        this.failures = new FailureLog(LOG, config.name(), System::nanoTime);
    }

    /** A fresh owner name, for one worker. */
    public String newOwner() {
        return ownerIds.get();
    }

    /** The registered job types. */
    public java.util.Set<String> types() {
        return handlers.keySet();
    }

    // ---------------------------------------------------------------- claiming and running

    Bson claimUpdate() {
        return Updates.combine(Updates.set(STATE, JobState.PROCESSING.stored()), Updates.unset(CLAIM_AT),
                Updates.inc(ATTEMPTS, 1), Updates.currentDate(CLAIMED));
    }

    /** Claims the highest-priority due job, or the given one. */
    public Optional<ClaimedJob> claim(String owner, Object onlyId) {
        List<Bson> filters = new ArrayList<>();
        if (onlyId != null) {
            filters.add(eq("_id", onlyId));
        }
        // due and claimable: only a todo or failed job holds claimAt (JobSchema.CLAIM_AT), written with its state
        filters.add(lte(CLAIM_AT, Date.from(clock.now())));
        filters.add(exists(HELD, false));   // a relayed job its relayer has not found still outboxed yet
        return store.claim(onlyId, and(filters), owner, config.lease(), clock, claimUpdate())
                .map(c -> new ClaimedJob(c, c.document(), System.nanoTime()));
    }

    /** Runs a claimed job's handler and records the outcome, fenced by the claim's token. */
    public RanJob run(ClaimedJob claimed) {
        Document job = claimed.job();
        String type = job.getString(TYPE);
        JobHandler handler = handlers.get(type);
        if (handler == null) {
            return finishDead(claimed, AttemptFailure.of("no handler is registered for job type '" + type + "'"));
        }
        Context context = new Context(claimed);
        AttemptFailure failure;
        try {
            handler.handle(context);
            return complete(claimed, context.recorded);
        } catch (LeaseLostException lost) {
            return lost(claimed);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure = AttemptFailure.of("interrupted: ", e);
        } catch (Exception e) {
            failure = AttemptFailure.of("", e);   // read once, whatever its methods throw
        }
        return fail(claimed, failure);
    }

    RanJob complete(ClaimedJob claimed, boolean recordedEffects) {
        boolean effects = recordedEffects || !claimed.job().getList(EFFECTS, Object.class, List.of()).isEmpty();
        Bson toDone = Updates.combine(Updates.set(STATE, JobState.DONE.stored()), Updates.currentDate(COMPLETED),
                Updates.unset(OWNER), Updates.unset(LEASE), attempt(claimed, JobState.DONE, null));
        GuardedResult r = fenced(claimed, "complete", effects ? Updates.combine(toDone,
                Updates.set(UNSETTLED, true)) : toDone);
        if (isOurs(r, claimed, JobState.DONE)) {
            if (effects) {
                settleEffects(claimed.id(), r.document().orElse(null));
            }
            hooks.ended(new JobHook.EndedJob(claimed.id(), claimed.job(), JobState.DONE, null, null));
            return new RanJob(claimed.id(), JobState.DONE, false, null);
        }
        return lost(claimed);
    }

    RanJob fail(ClaimedJob claimed, AttemptFailure failure) {
        Document job = claimed.job();
        int attempt = job.getInteger(ATTEMPTS);
        if (attempt >= job.getInteger(MAX_ATTEMPTS)) {
            return finishDead(claimed, failure);
        }
        String error = failure.text();
        Duration delay = backoff(attempt);
        Date runAt = Date.from(clock.now().plus(delay));
        GuardedResult r = fenced(claimed, "fail", Updates.combine(Updates.set(STATE, JobState.FAILED.stored()),
                Updates.set(RUN_AT, runAt), Updates.set(CLAIM_AT, runAt), Updates.set(LAST_ERROR, error),
                Updates.unset(OWNER), Updates.unset(LEASE), attempt(claimed, JobState.FAILED, failure)));
        if (isOurs(r, claimed, JobState.FAILED)) {
            failures.failed(claimed.id(), job.getString(TYPE), attempt, job.getInteger(MAX_ATTEMPTS),
                    runAt.toInstant(), delay, failure);
            hooks.failed(claimed.id(), job.getString(TYPE), attempt, error, failure.thrown());
            return new RanJob(claimed.id(), JobState.FAILED, false, error);
        }
        return lost(claimed);
    }

    RanJob finishDead(ClaimedJob claimed, AttemptFailure failure) {
        String error = failure.text();
        GuardedResult r = fenced(claimed, "dead", Updates.combine(Updates.set(STATE, JobState.DEAD.stored()),
                Updates.set(LAST_ERROR, error), Updates.unset(OWNER), Updates.unset(LEASE),
                attempt(claimed, JobState.DEAD, failure)));
        if (isOurs(r, claimed, JobState.DEAD)) {
            failures.dead(claimed.id(), claimed.job().getString(TYPE), claimed.job().getInteger(ATTEMPTS),
                    claimed.job().getInteger(MAX_ATTEMPTS), failure);
            hooks.ended(new JobHook.EndedJob(claimed.id(), claimed.job(), JobState.DEAD, error, failure.thrown()));
            return new RanJob(claimed.id(), JobState.DEAD, false, error);
        }
        return lost(claimed);
    }

    /**
     * The attempt this claim made, appended to the job's history in the write that records its outcome (the oldest
     * dropped beyond {@link JobQueueConfig#attemptHistory}): when it started (the claim's server time), how long it
     * took (this process's clock), the worker, the outcome, the error and its top frames (bounded: {@link
     * AttemptFailure#MAX_FRAMES} lines).
     */
    Bson attempt(ClaimedJob claimed, JobState outcome, AttemptFailure failure) {
        Document entry = new Document("start", claimed.job().get(CLAIMED))
                .append("ms", (System.nanoTime() - claimed.claimedAt()) / 1_000_000)
                .append("worker", claimed.claim().owner()).append("outcome", outcome.stored());
        if (failure != null) {
            entry.append("error", failure.text());
            if (!failure.frames().isEmpty()) {
                entry.append("stack", failure.frames());
            }
        }
        return history(config, entry);
    }

    /** {@code entry} appended to a job's history, the oldest dropped beyond the setting; nothing when it is 0. */
    static Bson history(JobQueueConfig config, Document entry) {
        int keep = config.attemptHistory();
        return keep == 0 ? new Document()
                : Updates.pushEach(JobSchema.HISTORY, List.of(entry), new PushOptions().slice(-keep));
    }

    /**
     * A write on the job fenced by this claim: its token orders the claims of one job, its owner tells apart two jobs
     * enqueued under one id, one after the other was pruned, whose tokens both start again.
     */
    GuardedResult fenced(ClaimedJob claimed, String what, Bson update) {
        return config.retryPolicy().execute(config.name(), claimed.id(), what,
                () -> store.fenced(claimed.id(), claimed.claim().fencingToken(),
                        and(eq(STATE, JobState.PROCESSING.stored()), eq(OWNER, claimed.claim().owner())), update));
    }

    /** Applied now, or applied by our own earlier attempt whose reply was lost (same token, target state). */
    static boolean isOurs(GuardedResult r, ClaimedJob claimed, JobState target) {
        if (r.outcome() == UpdateOutcome.APPLIED) {
            return true;
        }
        Document now = r.document().orElse(null);
        return now != null && target.stored().equals(now.getString(STATE))
                && ConditionalUpdates.tokenOf(now, LEASE_FIELDS) == claimed.claim().fencingToken();
    }

    RanJob lost(ClaimedJob claimed) {
        hooks.leaseLost(claimed.id(), claimed.job().getString(TYPE));
        Document now = store.readPrimary(claimed.id());
        JobState state = now == null ? JobState.DONE : JobState.fromStored(now.getString(STATE));
        return new RanJob(claimed.id(), state, true, now == null ? null : now.getString(LAST_ERROR));
    }

    Duration backoff(int attempt) {
        double nominal = (double) config.retryBackoff().toMillis() * Math.pow(2, Math.max(0, attempt - 1));
        double bounded = Math.min(nominal, (double) config.maxRetryBackoff().toMillis());
        double jittered = bounded * (0.5 + ThreadLocalRandom.current().nextDouble());
        long capped = (long) Math.min(jittered, (double) config.maxRetryBackoff().toMillis());
        return Duration.ofMillis(Math.max(1, capped));
    }

    /** Renews a claimed job's lease. */
    public void heartbeat(ClaimedJob claimed) {
        GuardedResult r = config.retryPolicy().execute(config.name(), claimed.id(), "heartbeat",
                () -> store.renew(claimed.id(), claimed.claim().fencingToken(),
                        config.lease(), clock));
        if (r.outcome() != UpdateOutcome.APPLIED) {
            throw new LeaseLostException(config.name(), claimed.id(), claimed.claim().fencingToken(),
                    "another worker took job " + claimed.id() + " over");
        }
    }

    /** Gives a claimed job back (graceful shutdown): {@code TODO} again, due now, the attempt not counted. */
    public boolean release(ClaimedJob claimed) {
        GuardedResult r = config.retryPolicy().execute(config.name(), claimed.id(), "release",
                () -> store.giveBack(claimed.id(), claimed.claim().fencingToken(),
                        Updates.combine(Updates.set(STATE, JobState.TODO.stored()),
                                Updates.set(CLAIM_AT, claimed.job().get(RUN_AT)), Updates.inc(ATTEMPTS, -1),
                                Updates.inc(TOKEN, 1L))));
        return r.outcome() == UpdateOutcome.APPLIED;
    }

    /** The nonce of one claim of a job: its owner and fencing token. */
    static String nonce(ClaimedJob claimed) {
        return OnceEffects.nonce(claimed.claim().owner(), claimed.claim().fencingToken());
    }

    /**
     * One effect of a job's handler, by the {@link OnceEffects} lifecycle: reserve the document for this claim, check
     * (and record on the job) that the claim still holds the job, then apply under this claim's reservation. A worker
     * that lost its lease, however long ago, cannot apply: its check fails, or its reservation was consumed, released
     * or taken over by the worker that holds the job now.
     */
    UpdateOutcome applyEffect(ClaimedJob claimed, String collectionName, MongoCollection<Document> target,
                                      Object documentId, Bson update) {
        Object jobId = claimed.id();
        String nonce = nonce(claimed);
        for (int round = 0; ; round++) {
            GuardedResult reserved = config.retryPolicy().execute(config.name(), jobId, "reserve effect",
                    () -> OnceEffects.reserveOne(target, EFFECT_MARKER, jobId, nonce, documentId, null));
            if (reserved.outcome() == UpdateOutcome.MISSING) {
                return UpdateOutcome.MISSING;
            }
            Document current = reserved.document().orElseThrow();
            EffectMarker.Evidence evidence = EFFECT_MARKER.evidence(current, jobId, nonce);
            if (evidence == EffectMarker.Evidence.APPLIED) {
                recordEffect(claimed, collectionName, documentId);
                return UpdateOutcome.ALREADY_APPLIED;
            }
            if (evidence == EffectMarker.Evidence.RESERVED) {
                break;
            }
            if (round >= 3) {
                throw new LeaseLostException(config.name(), jobId, claimed.claim().fencingToken(), "job " + jobId
                        + " is being applied to " + collectionName + "/" + documentId + " by another claim");
            }
            if (evidence == EffectMarker.Evidence.RESERVED_BY_OTHER) {
                String holder = EFFECT_MARKER.reservedBy(current, jobId);
                if (OnceEffects.tokenOf(holder) > claimed.claim().fencingToken()) {
                    // a later claim holds it: this one was taken over and must not take it back
                    throw new LeaseLostException(config.name(), jobId, claimed.claim().fencingToken(),
                            "a later claim of job " + jobId + " holds " + collectionName + "/" + documentId);
                }
                // an earlier claim of this job reserved it and lost its lease: make the reservation ours
                config.retryPolicy().execute(config.name(), jobId, "take over effect",
                        () -> OnceEffects.takeOver(target, EFFECT_MARKER, documentId, jobId, holder, nonce));
            }
        }
        if (!recordEffect(claimed, collectionName, documentId)) {
            config.retryPolicy().run(config.name(), jobId, "release effect",
                    () -> OnceEffects.release(target, EFFECT_MARKER, jobId, nonce, List.of(documentId)));
            throw new LeaseLostException(config.name(), jobId, claimed.claim().fencingToken(),
                    "another worker took job " + jobId + " over");
        }
        BsonDocument inc = update instanceof BsonDocument b ? b : null;   // checked, rendered: guard its $incs
        Bson operands = IncOperands.guard(inc);
        Bson range = IncOverflow.guard(inc);
        Bson guard = operands == null ? range : range == null ? operands : Filters.and(operands, range);
        GuardedResult r;
        try {
            r = config.retryPolicy().execute(config.name(), jobId, "apply effect",
                    () -> OnceEffects.apply(target, EFFECT_MARKER, jobId, nonce, List.of(new MarkerWrite(documentId,
                            guard, update))).get(documentId));
        } catch (MongoWriteException | MongoCommandException refused) {
            // the server refused the one document's update whole (not transient: the retry policy rethrew it)
            config.retryPolicy().run(config.name(), jobId, "release effect",
                    () -> OnceEffects.release(target, EFFECT_MARKER, jobId, nonce, List.of(documentId)));
            throw new EffectRefusedException(config.name(), jobId, "the server refused the effect on "
                    + collectionName + "/" + documentId + ", nothing written: " + refused.getMessage());
        }
        if (r.outcome() != UpdateOutcome.GUARD_FAILED) {
            return r.outcome();
        }
        // this attempt's reservation is still there, and it never comes back once gone: so at the apply it was
        // there too, and what the server refused was the guard of the $incs (the rest of the apply's filter)
        Optional<String> overflow = r.document().filter(d -> EFFECT_MARKER.evidence(d, jobId, nonce)
                == EffectMarker.Evidence.RESERVED).map(d -> IncOperands.refusal(inc, d)
                .orElseGet(() -> IncOverflow.refusal(inc, d)));
        if (overflow.isPresent()) {
            config.retryPolicy().run(config.name(), jobId, "release effect",
                    () -> OnceEffects.release(target, EFFECT_MARKER, jobId, nonce, List.of(documentId)));
            throw new EffectRefusedException(config.name(), jobId, "the effect on " + collectionName + "/"
                    + documentId + " was refused, nothing written: " + overflow.get());
        }
        throw new LeaseLostException(config.name(), jobId, claimed.claim().fencingToken(), "another worker took job "
                + jobId + " over before its effect on " + collectionName + "/" + documentId + " applied");
    }

    /**
     * Records {@code documentId} among the job's effects, fenced by the claim's token: the ownership check of the
     * lifecycle, and what lets completion (or {@link JobPruner#prune}) settle every document the job touched.
     *
     * @return whether this claim still holds the job
     */
    boolean recordEffect(ClaimedJob claimed, String collectionName, Object documentId) {
        Document effect = new Document("c", collectionName).append("id", documentId);
        return store.recordEffect(claimed.id(), claimed.claim().fencingToken(), claimed.claim().owner(), effect);
    }

    /**
     * Settles a done job's effects: pulls its applied mark (and any reservation an earlier claim left) from every
     * document it recorded. Best effort: {@link JobPruner#prune} settles what a crash left.
     */
    void settleEffects(Object jobId, Document job) {
        Map<String, List<Object>> byCollection = new HashMap<>();
        for (Object e : job == null ? List.of() : job.getList(EFFECTS, Object.class, List.of())) {
            if (e instanceof Document d && d.get("c") instanceof String c && d.get("id") != null) {
                byCollection.computeIfAbsent(c, k -> new ArrayList<>()).add(d.get("id"));
            }
        }
        for (Map.Entry<String, List<Object>> group : byCollection.entrySet()) {
            MongoCollection<Document> target = store.collection(group.getKey());
            // each document once as the server tells ids apart: {b: 2, a: 1} is not {a: 1, b: 2}
            List<MarkerWrite> writes = Ids.distinct(group.getValue(), target.getCodecRegistry()).stream()
                    .map(id -> MarkerWrite.of(id, null)).toList();
            try {
                Map<Object, GuardedResult> settled = config.retryPolicy().execute(config.name(), jobId,
                        "settle effects", () -> OnceEffects.settle(target, EFFECT_MARKER, jobId, writes));
                List<Object> stillReserved = new ArrayList<>();
                settled.forEach((id, r) -> r.document().filter(d -> EFFECT_MARKER.reservedBy(d, jobId) != null)
                        .ifPresent(d -> stillReserved.add(id)));
                if (!stillReserved.isEmpty()) {
                    config.retryPolicy().run(config.name(), jobId, "release effects",
                            () -> OnceEffects.release(target, EFFECT_MARKER, jobId, null, stillReserved));
                }
            } catch (ConsistencyException | MongoException e) {
                LOG.warn("[{}] job {} is done but settling its marks on {} failed ({}); recovery will", config.name(),
                        jobId, group.getKey(), e.toString());
                return;
            }
        }
        store.settled(jobId);
    }

    /** Settles the effects of done (and discarded) jobs whose worker (or discarder) died before it could. */
    int settleDone() {
        List<Document> unsettled = store.unsettled();
        int settled = 0;
        for (Document job : unsettled) {
            if (JobState.DONE.stored().equals(job.getString(STATE))
                    || JobState.DISCARDED.stored().equals(job.getString(STATE))) {
                settleEffects(job.get("_id"), job);
                settled++;
            }
        }
        return settled;
    }

    final class Context implements JobContext {
        private final ClaimedJob claimed;
        private volatile boolean recorded;

        Context(ClaimedJob claimed) {
            this.claimed = claimed;
        }

        @Override
        public OperationId id() {
            return new OperationId(claimed.id());
        }

        @Override
        public String type() {
            return claimed.job().getString(TYPE);
        }

        @Override
        public Document payload() {
            return claimed.job().get(PAYLOAD, Document.class);
        }

        @Override
        public <T> T payload(Class<T> type) {
            return Values.decode(config.name(), PAYLOAD, payload(), type, store.codecs());
        }

        @Override
        public int attempt() {
            return claimed.job().getInteger(ATTEMPTS);
        }

        @Override
        public long fencingToken() {
            return claimed.claim().fencingToken();
        }

        @Override
        public UpdateOutcome applyOnce(String collection, Object documentId, Bson update) {
            UpdateOutcome outcome = applyOnceIfPresent(collection, documentId, update);
            if (outcome == UpdateOutcome.MISSING) {
                throw new EffectTargetMissingException(config.name(), claimed.id(), collection, documentId);
            }
            return outcome;
        }

        @Override
        public UpdateOutcome applyOnceIfPresent(String collection, Object documentId, Bson update) {
            Names.fieldName(config.name(), "collection", collection);
            MongoCollection<Document> target = store.collection(collection);
            Object id = Ids.documentId(config.name(), "documentId", documentId, target.getCodecRegistry());
            BsonDocument checked = UpdateGrammar.updateSpec(config.name(), "update", update, target.getCodecRegistry(),
                    EFFECT_FIELDS);
            recorded = true;
            return applyEffect(claimed, collection, target, id, checked);
        }

        @Override
        public void heartbeat() {
            JobRunner.this.heartbeat(claimed);
        }
    }

    /** Enqueues {@code job} and runs it in this thread when it is due and free. */
    public OperationResult apply(EncodedJob job) {
        OperationId id = recording.enqueue(job);
        Optional<ClaimedJob> claimed = claim(newOwner(), id.value());
        if (claimed.isPresent()) {
            return result(run(claimed.get()));
        }
        Document now = store.readPrimary(id.value());
        JobState state = now == null ? JobState.TODO : JobState.fromStored(now.getString(STATE));
        return new RanJob(id.value(), state, false, now == null ? null : now.getString(LAST_ERROR)).toResult(now);
    }

    OperationResult result(RanJob ran) {
        Document now = ran.error() == null && (ran.state() == JobState.DEAD || ran.state() == JobState.FAILED)
                ? store.readPrimary(ran.id()) : null;
        return ran.toResult(now);
    }

    /**
     * A failed attempt, counted, for a job whose worker thread died of {@code error} (an {@link Error} from its
     * handler, which the library never catches): the job backs off, then dies after its last attempt, instead of
     * being claimed again at once for ever.
     */
    public RanJob died(ClaimedJob claimed, Throwable error) {
        return fail(claimed, AttemptFailure.of("the worker running it died: ", error));
    }

    /** Claims and runs one due job. */
    public Optional<OperationResult> processNext(String owner) {
        return claim(owner, null).map(this::run).map(this::result);
    }
}
