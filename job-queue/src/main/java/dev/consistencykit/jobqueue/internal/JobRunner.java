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
import static dev.consistencykit.jobqueue.internal.JobFields.EFFECT_FIELDS;
import static dev.consistencykit.jobqueue.internal.JobFields.EFFECT_MARKER;
import static dev.consistencykit.jobqueue.internal.JobFields.HELD;
import static dev.consistencykit.jobqueue.internal.JobFields.LAST_ERROR;
import static dev.consistencykit.jobqueue.internal.JobFields.LEASE;
import static dev.consistencykit.jobqueue.internal.JobFields.LEASE_FIELDS;
import static dev.consistencykit.jobqueue.internal.JobFields.LOG;
import static dev.consistencykit.jobqueue.internal.JobFields.MAX_ATTEMPTS;
import static dev.consistencykit.jobqueue.internal.JobFields.OWNER;
import static dev.consistencykit.jobqueue.internal.JobFields.PAYLOAD;
import static dev.consistencykit.jobqueue.internal.JobFields.PRIORITY;
import static dev.consistencykit.jobqueue.internal.JobFields.RUN_AT;
import static dev.consistencykit.jobqueue.internal.JobFields.STATE;
import static dev.consistencykit.jobqueue.internal.JobFields.TOKEN;
import static dev.consistencykit.jobqueue.internal.JobFields.TYPE;
import static dev.consistencykit.jobqueue.internal.JobFields.UNSETTLED;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.MongoException;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.LeaseLostException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.spi.Claim;
import dev.consistencykit.core.spi.ConditionalUpdates;
import dev.consistencykit.core.spi.EffectMarker;
import dev.consistencykit.core.spi.GuardedResult;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.IncOverflow;
import dev.consistencykit.core.spi.MarkerWrite;
import dev.consistencykit.core.spi.Names;
import dev.consistencykit.core.spi.OnceEffects;
import dev.consistencykit.core.spi.UpdateGrammar;
import dev.consistencykit.core.spi.UpdateOutcome;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.jobqueue.EffectOverflowException;
import dev.consistencykit.jobqueue.EffectTargetMissingException;
import dev.consistencykit.jobqueue.JobContext;
import dev.consistencykit.jobqueue.JobHandler;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobState;
import dev.consistencykit.jobqueue.internal.JobEngine.Claimed;
import dev.consistencykit.jobqueue.internal.JobEngine.Ran;

/**
 * Claiming and running a job: the lease and fencing token, the handler's apply-once effects, completion.
 */
final class JobRunner {

    private final JobFields fields;
    private final JobQueueConfig config;
    private final FailureLog failures;

    /** The claiming and running of jobs, over the shared fields. */
    JobRunner(JobFields fields) {
        this.fields = fields;
        this.config = fields.config;
        this.failures = new FailureLog(LOG, config.name(), System::nanoTime);
    }

    // ---------------------------------------------------------------- claiming and running

    Bson claimUpdate() {
        return Updates.combine(Updates.set(STATE, JobState.PROCESSING.stored()), Updates.inc(ATTEMPTS, 1),
                Updates.currentDate(CLAIMED));
    }

    /** Claims the highest-priority due job, or the given one. */
    public Optional<Claimed> claim(String owner, Object onlyId) {
        List<Bson> filters = new ArrayList<>();
        if (onlyId != null) {
            filters.add(eq("_id", onlyId));
        }
        filters.add(in(STATE, DUE_STATES));
        filters.add(lte(RUN_AT, Date.from(fields.clock.now())));
        filters.add(exists(HELD, false));   // a relayed job its relayer has not found still outboxed yet
        boolean[] sent = {false};   // a retry looks first for what its earlier attempt claimed (a lost reply)
        Optional<Claim> claim = config.retryPolicy().execute(config.name(), onlyId, "claim job", () -> {
            Optional<Claim> mine = sent[0] ? ConditionalUpdates.heldBy(fields.jobs, eq(STATE, JobState.PROCESSING
                    .stored()),
                    owner, LEASE_FIELDS) : Optional.empty();
            sent[0] = true;
            return mine.isPresent() ? mine : ConditionalUpdates.claim(fields.jobs, and(filters), Sorts.orderBy(
                    Sorts.descending(PRIORITY), Sorts.ascending(RUN_AT)), owner, config.lease(), fields.clock,
                            LEASE_FIELDS,
                    claimUpdate());
        });
        return claim.map(c -> new Claimed(c, c.document()));
    }

    /** Runs a claimed job's handler and records the outcome, fenced by the claim's token. */
    public Ran run(Claimed claimed) {
        Document job = claimed.job();
        String type = job.getString(TYPE);
        JobHandler handler = fields.handlers.get(type);
        if (handler == null) {
            return finishDead(claimed, "no handler is registered for job type '" + type + "'");
        }
        Context context = new Context(claimed);
        String error;
        try {
            handler.handle(context);
            return complete(claimed, context.recorded);
        } catch (LeaseLostException lost) {
            return lost(claimed);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            error = "interrupted: " + e;
        } catch (Exception e) {
            error = errorText(e);
        }
        return fail(claimed, error);
    }

    static String errorText(Throwable e) {
        return e.getClass().getSimpleName() + (e.getMessage() == null || e.getMessage().isBlank() ? "" : ": "
                + e.getMessage());
    }

    Ran complete(Claimed claimed, boolean recordedEffects) {
        boolean effects = recordedEffects || !claimed.job().getList(EFFECTS, Object.class, List.of()).isEmpty();
        Bson toDone = Updates.combine(Updates.set(STATE, JobState.DONE.stored()), Updates.currentDate(COMPLETED),
                Updates.unset(OWNER), Updates.unset(LEASE));
        GuardedResult r = fenced(claimed, "complete", effects ? Updates.combine(toDone,
                Updates.set(UNSETTLED, true)) : toDone);
        if (isOurs(r, claimed, JobState.DONE)) {
            if (effects) {
                settleEffects(claimed.id(), r.document().orElse(null));
            }
            fields.done.increment();
            fields.notify(() -> fields.listener.onDone(new OperationId(claimed.id()), claimed.job().getString(TYPE)));
            return new Ran(claimed.id(), JobState.DONE, false, null);
        }
        return lost(claimed);
    }

    Ran fail(Claimed claimed, String error) {
        Document job = claimed.job();
        int attempt = job.getInteger(ATTEMPTS);
        if (attempt >= job.getInteger(MAX_ATTEMPTS)) {
            return finishDead(claimed, error);
        }
        Duration delay = backoff(attempt);
        Date runAt = Date.from(fields.clock.now().plus(delay));
        GuardedResult r = fenced(claimed, "fail", Updates.combine(Updates.set(STATE, JobState.FAILED.stored()),
                Updates.set(RUN_AT, runAt), Updates.set(LAST_ERROR, error), Updates.unset(OWNER),
                Updates.unset(LEASE)));
        if (isOurs(r, claimed, JobState.FAILED)) {
            fields.failed.increment();
            failures.failed(claimed.id(), job.getString(TYPE), attempt, job.getInteger(MAX_ATTEMPTS),
                    runAt.toInstant(), delay, error);
            fields.notify(() -> fields.listener.onFailed(new OperationId(claimed.id()), job.getString(TYPE), attempt,
                    error));
            return new Ran(claimed.id(), JobState.FAILED, false, error);
        }
        return lost(claimed);
    }

    Ran finishDead(Claimed claimed, String error) {
        GuardedResult r = fenced(claimed, "dead", Updates.combine(Updates.set(STATE, JobState.DEAD.stored()),
                Updates.set(LAST_ERROR, error), Updates.unset(OWNER), Updates.unset(LEASE)));
        if (isOurs(r, claimed, JobState.DEAD)) {
            fields.dead.increment();
            failures.dead(claimed.id(), claimed.job().getString(TYPE), claimed.job().getInteger(ATTEMPTS),
                    claimed.job().getInteger(MAX_ATTEMPTS), error);
            fields.notify(() -> fields.listener.onDead(new OperationId(claimed.id()), claimed.job().getString(TYPE),
                    error));
            return new Ran(claimed.id(), JobState.DEAD, false, error);
        }
        return lost(claimed);
    }

    /**
     * A write on the job fenced by this claim: its token orders the claims of one job, its owner tells apart two jobs
     * enqueued under one id, one after the other was pruned, whose tokens both start again.
     */
    GuardedResult fenced(Claimed claimed, String what, Bson update) {
        return config.retryPolicy().execute(config.name(), claimed.id(), what,
                () -> ConditionalUpdates.fenced(fields.jobs, claimed.id(), LEASE_FIELDS, claimed.claim().fencingToken(),
                        and(eq(STATE, JobState.PROCESSING.stored()), eq(OWNER, claimed.claim().owner())), update));
    }

    /** Applied now, or applied by our own earlier attempt whose reply was lost (same token, target state). */
    static boolean isOurs(GuardedResult r, Claimed claimed, JobState target) {
        if (r.outcome() == UpdateOutcome.APPLIED) {
            return true;
        }
        Document now = r.document().orElse(null);
        return now != null && target.stored().equals(now.getString(STATE))
                && ConditionalUpdates.tokenOf(now, LEASE_FIELDS) == claimed.claim().fencingToken();
    }

    Ran lost(Claimed claimed) {
        fields.leaseLost.increment();
        fields.notify(() -> fields.listener.onLeaseLost(new OperationId(claimed.id()), claimed.job().getString(TYPE)));
        Document now = fields.jobs.withReadPreference(ReadPreference.primary()).find(eq("_id", claimed.id())).first();
        JobState state = now == null ? JobState.DONE : JobState.fromStored(now.getString(STATE));
        return new Ran(claimed.id(), state, true, now == null ? null : now.getString(LAST_ERROR));
    }

    Duration backoff(int attempt) {
        double nominal = (double) config.retryBackoff().toMillis() * Math.pow(2, Math.max(0, attempt - 1));
        double bounded = Math.min(nominal, (double) config.maxRetryBackoff().toMillis());
        double jittered = bounded * (0.5 + ThreadLocalRandom.current().nextDouble());
        long capped = (long) Math.min(jittered, (double) config.maxRetryBackoff().toMillis());
        return Duration.ofMillis(Math.max(1, capped));
    }

    /** Renews a claimed job's lease. */
    public void heartbeat(Claimed claimed) {
        GuardedResult r = config.retryPolicy().execute(config.name(), claimed.id(), "heartbeat",
                () -> ConditionalUpdates.renew(fields.jobs, claimed.id(), LEASE_FIELDS, claimed.claim().fencingToken(),
                        config.lease(), fields.clock));
        if (r.outcome() != UpdateOutcome.APPLIED) {
            throw new LeaseLostException(config.name(), claimed.id(), claimed.claim().fencingToken(),
                    "another worker took job " + claimed.id() + " over");
        }
    }

    /** Gives a claimed job back (graceful shutdown): {@code TODO} again, due now, the attempt not counted. */
    public boolean release(Claimed claimed) {
        GuardedResult r = config.retryPolicy().execute(config.name(), claimed.id(), "release",
                () -> ConditionalUpdates.release(fields.jobs, claimed.id(), LEASE_FIELDS, claimed.claim()
                        .fencingToken(),
                        Updates.combine(Updates.set(STATE, JobState.TODO.stored()), Updates.inc(ATTEMPTS, -1),
                                Updates.inc(TOKEN, 1L))));
        return r.outcome() == UpdateOutcome.APPLIED;
    }

    /** The nonce of one claim of a job: its owner and fencing token. */
    static String nonce(Claimed claimed) {
        return OnceEffects.nonce(claimed.claim().owner(), claimed.claim().fencingToken());
    }

    /**
     * One effect of a job's handler, by the {@link OnceEffects} lifecycle: reserve the document for this claim, check
     * (and record on the job) that the claim still holds the job, then apply under this claim's reservation. A worker
     * that lost its lease, however long ago, cannot apply: its check fails, or its reservation was consumed, released
     * or taken over by the worker that holds the job now.
     */
    UpdateOutcome applyEffect(Claimed claimed, String collectionName, MongoCollection<Document> target,
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
        GuardedResult r = config.retryPolicy().execute(config.name(), jobId, "apply effect",
                () -> OnceEffects.apply(target, EFFECT_MARKER, jobId, nonce, List.of(new MarkerWrite(documentId,
                        IncOverflow.guard(inc), update))).get(documentId));
        if (r.outcome() != UpdateOutcome.GUARD_FAILED) {
            return r.outcome();
        }
        Optional<String> overflow = r.document().filter(d -> EFFECT_MARKER.evidence(d, jobId, nonce)
                == EffectMarker.Evidence.RESERVED).flatMap(d -> IncOverflow.of(inc, d));
        if (overflow.isPresent()) {
            config.retryPolicy().run(config.name(), jobId, "release effect",
                    () -> OnceEffects.release(target, EFFECT_MARKER, jobId, nonce, List.of(documentId)));
            throw new EffectOverflowException(config.name(), jobId, "the effect on " + collectionName + "/"
                    + documentId + " was refused, nothing written: " + overflow.get());
        }
        throw new LeaseLostException(config.name(), jobId, claimed.claim().fencingToken(), "another worker took job "
                + jobId + " over before its effect on " + collectionName + "/" + documentId + " applied");
    }

    /**
     * Records {@code documentId} among the job's effects, fenced by the claim's token: the ownership check of the
     * lifecycle, and what lets completion (or {@link JobEngine#prune}) settle every document the job touched.
     *
     * @return whether this claim still holds the job
     */
    boolean recordEffect(Claimed claimed, String collectionName, Object documentId) {
        Document effect = new Document("c", collectionName).append("id", documentId);
        long matched = config.retryPolicy().execute(config.name(), claimed.id(), "record effect", () -> fields.jobs
                .updateOne(
                and(eq("_id", claimed.id()), eq(TOKEN, claimed.claim().fencingToken()),
                        eq(OWNER, claimed.claim().owner()), eq(STATE, JobState.PROCESSING.stored())),
                Updates.addToSet(EFFECTS, effect)).getMatchedCount());
        return matched == 1;
    }

    /**
     * Settles a done job's effects: pulls its applied mark (and any reservation an earlier claim left) from every
     * document it recorded. Best effort: {@link JobEngine#prune} settles what a crash left.
     */
    void settleEffects(Object jobId, Document job) {
        Map<String, List<Object>> byCollection = new HashMap<>();
        for (Object e : job == null ? List.of() : job.getList(EFFECTS, Object.class, List.of())) {
            if (e instanceof Document d && d.get("c") instanceof String c && d.get("id") != null) {
                byCollection.computeIfAbsent(c, k -> new ArrayList<>()).add(d.get("id"));
            }
        }
        for (Map.Entry<String, List<Object>> group : byCollection.entrySet()) {
            MongoCollection<Document> target = fields.collections.computeIfAbsent(group.getKey(), fields
                    .database::getCollection);
            List<MarkerWrite> writes = group.getValue().stream().distinct().map(id -> MarkerWrite.of(id, null))
                    .toList();
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
        config.retryPolicy().run(config.name(), jobId, "effects settled", () -> fields.jobs.updateOne(
                and(eq("_id", jobId), eq(UNSETTLED, true)), Updates.unset(UNSETTLED)));
    }

    /** Settles the effects of done (and discarded) jobs whose worker (or discarder) died before it could. */
    int settleDone() {
        List<Document> unsettled = config.retryPolicy().execute(config.name(), null, "find unsettled jobs",
                () -> fields.jobs.find(eq(UNSETTLED, true)).projection(Projections.include(STATE, EFFECTS)).limit(1_000)
                        .into(new ArrayList<>()));
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
        private final Claimed claimed;
        private volatile boolean recorded;

        Context(Claimed claimed) {
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
            return Values.decode(config.name(), PAYLOAD, payload(), type, fields.jobs.getCodecRegistry());
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
            MongoCollection<Document> target = fields.collections.computeIfAbsent(collection, fields
                    .database::getCollection);
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
}
