package dev.consistencykit.jobqueue.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Filters.ne;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.MongoException;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.result.UpdateResult;

import dev.consistencykit.core.Checks;
import dev.consistencykit.core.Claim;
import dev.consistencykit.core.ConditionalUpdates;
import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.GuardedResult;
import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.Inputs;
import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.LeaseFields;
import dev.consistencykit.core.LeaseLostException;
import dev.consistencykit.core.Listeners;
import dev.consistencykit.core.EffectMarker;
import dev.consistencykit.core.MarkerWrite;
import dev.consistencykit.core.OnceEffects;
import dev.consistencykit.core.PatternRegistry;
import dev.consistencykit.core.MongoErrors;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.OutcomeUnknownException;
import dev.consistencykit.core.ReadSettings;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.core.Transition;
import dev.consistencykit.core.UpdateOutcome;
import dev.consistencykit.core.WriteConcerns;
import dev.consistencykit.jobqueue.JobContext;
import dev.consistencykit.jobqueue.JobHandler;
import dev.consistencykit.jobqueue.JobListener;
import dev.consistencykit.jobqueue.JobQueueConfig;
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
public final class JobEngine {

    private static final Logger LOG = LoggerFactory.getLogger(JobEngine.class);

    static final String TYPE = "type";
    static final String PAYLOAD = "payload";
    static final String STATE = "state";
    static final String PRIORITY = "priority";
    static final String RUN_AT = "runAt";
    static final String ENQUEUED = "enqueuedAt";
    static final String LAST_MODIFIED = Transition.DEFAULT_LAST_MODIFIED_FIELD;
    static final String ATTEMPTS = "attempts";
    static final String MAX_ATTEMPTS = "maxAttempts";
    static final String LAST_ERROR = "lastError";
    static final String OWNER = "owner";
    static final String CLAIMED = "claimedAt";
    static final String LEASE = "leaseExpiresAt";
    static final String TOKEN = "fencingToken";
    static final String DEDUPE = "dedupeKey";
    static final String COMPLETED = "completedAt";
    /** The array on business documents holding jobs not yet moved to the queue. */
    public static final String OUTBOX = "jobOutbox";
    /** The reservations of {@code enqueueWith} calls on a business document, {@code {o: job id, n: call}}. */
    public static final String OUTBOX_RESERVED = "jobOutboxReserved";
    /** The ids of the jobs in a business document's outbox, settled (pulled) with their entry by the relay. */
    public static final String OUTBOX_WRITTEN = "jobOutboxWritten";
    /** The array on documents a handler changed with {@code applyOnce}: jobs applied there and not yet done. */
    public static final String APPLIED_JOBS = "appliedJobs";
    /** The reservations of running jobs on documents their handler is about to change, {@code {o: job, n: claim}}. */
    public static final String RESERVED_JOBS = "reservedJobs";
    /** On a job: the documents its handler reserved, {@code [{c: collection, id}]}, settled when it is done. */
    static final String EFFECTS = "effects";
    /** On a done job: its effects' marks are still to be settled. */
    static final String UNSETTLED = "unsettled";
    /** On a job relayed from an outbox: the nonce of the {@code enqueueWith} call that wrote it. */
    static final String OUTBOX_NONCE = "outboxNonce";
    /** Beyond this many applied marks on one document, marks of jobs already done are tidied when met. */
    private static final int TIDY_THRESHOLD = 16;

    private static final LeaseFields LEASE_FIELDS = new LeaseFields(OWNER, LEASE, TOKEN);
    private static final EffectMarker EFFECT_MARKER = EffectMarker.of(RESERVED_JOBS, APPLIED_JOBS);
    private static final EffectMarker OUTBOX_MARKER = EffectMarker.of(OUTBOX_RESERVED, OUTBOX_WRITTEN);

    /** The fields this queue keeps on business documents: no caller's update may touch them. */
    public static final Set<String> EFFECT_FIELDS = Set.of(RESERVED_JOBS, APPLIED_JOBS, OUTBOX, OUTBOX_RESERVED,
            OUTBOX_WRITTEN);
    private static final List<String> DUE_STATES = List.of(JobState.TODO.name(), JobState.FAILED.name());

    private final JobQueueConfig config;
    private final MongoDatabase database;
    private final MongoCollection<Document> jobs;
    private final ServerClock clock;
    private final JobListener listener;
    private final Supplier<String> ownerIds;
    private final Map<String, JobHandler> handlers;
    private final Map<String, MongoCollection<Document>> collections = new ConcurrentHashMap<>();

    private final LongAdder enqueued = new LongAdder();
    private final LongAdder done = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final LongAdder dead = new LongAdder();
    private final LongAdder requeued = new LongAdder();
    private final LongAdder leaseLost = new LongAdder();
    private final LongAdder relayed = new LongAdder();
    private final LongAdder pruned = new LongAdder();

    /**
     * @param config   validated settings
     * @param database the application's database
     * @param clock    server time
     * @param listener hooks
     * @param ownerIds unique worker names
     * @param handlers handler per job type
     */
    public JobEngine(JobQueueConfig config, MongoDatabase database, ServerClock clock, JobListener listener,
                     Supplier<String> ownerIds, Map<String, JobHandler> handlers) {
        database = ReadSettings.ownReads(database);
        this.config = config;
        this.database = database;
        this.jobs = database.getCollection(config.collection());
        this.clock = clock;
        this.listener = listener;
        this.ownerIds = ownerIds;
        this.handlers = Map.copyOf(handlers);
    }

    /** The application's listener. */
    public JobListener listener() {
        return listener;
    }

    /** The fresh owner name for one worker. */
    public String newOwner() {
        return ownerIds.get();
    }

    // ---- validation and recording ---------------------------------------------------------------------------

    /** A validated job in stored form (everything but the server-stamped times). */
    public record Encoded(Object id, Document fields, Duration delay) {

        OperationId operationId() {
            return new OperationId(id);
        }
    }

    /** Validates {@code job}; nothing is written. */
    public Encoded encode(JobRequest job) {
        Object id = Inputs.operationId(config.name(), "job id", job.id().value());
        String type = job.type();
        if (type == null || type.isBlank()) {
            throw new InvalidInputException(config.name(), "type", "type must not be "
                    + (type == null ? "null" : "blank, was " + Inputs.show(type)));
        }
        Inputs.plainValue(config.name(), "type", new BsonString(type));
        // stored as encoded and checked here, with the database's own codecs: a UUID or a POJO the caller's client
        // stores is accepted, an operator hidden in a driver value is not, and a later change to the caller's
        // document does not reach the queue
        BsonDocument payload = Inputs.plainDocument(config.name(), "payload",
                job.payload() == null ? new Document() : job.payload(), jobs.getCodecRegistry());
        int maxAttempts = job.maxAttempts().orElse(config.maxAttempts());
        if (maxAttempts < 1) {
            throw new InvalidInputException(config.name(), "maxAttempts", "maxAttempts must be >= 1, was "
                    + maxAttempts);
        }
        if (job.delay().isNegative()) {
            throw new InvalidInputException(config.name(), "delay", "delay must be >= 0, was " + job.delay());
        }
        Document fields = new Document(TYPE, type).append(PAYLOAD, payload).append(PRIORITY, job.priority())
                .append(ATTEMPTS, 0).append(MAX_ATTEMPTS, maxAttempts).append(TOKEN, 0L)
                .append(STATE, JobState.TODO.name());
        if (job.dedupeKey().isPresent()) {
            String key = job.dedupeKey().get();
            if (key.isBlank()) {
                throw new InvalidInputException(config.name(), "dedupeKey", "dedupeKey must not be blank");
            }
            Inputs.plainValue(config.name(), "dedupeKey", new BsonString(key));
            fields.append(DEDUPE, key);
        }
        return new Encoded(id, fields, job.delay());
    }

    private Bson recordUpdate(Encoded job) {
        Document fields = new Document(job.fields()).append(RUN_AT, Date.from(clock.now().plus(job.delay())));
        return Updates.combine(Updates.setOnInsert(fields), Updates.currentDate(ENQUEUED),
                Updates.currentDate(LAST_MODIFIED));
    }

    /** Records {@code job} (one write); a repeat with the same content returns the existing job's id. */
    public OperationId enqueue(Encoded job) {
        Object id = config.retryPolicy().execute(config.name(), job.id(), "enqueue", () -> {
            try {
                UpdateResult r = jobs.updateOne(and(eq("_id", job.id()), exists(STATE, false)), recordUpdate(job),
                        new UpdateOptions().upsert(true));
                if (r.getUpsertedId() == null) {
                    throw new ConsistencyException(config.name(), job.id(), "the jobs collection holds a document"
                            + " without a state under this id");
                }
                enqueued.increment();
                return job.id();
            } catch (MongoException e) {
                if (!MongoErrors.isDuplicateKey(e)) {
                    throw e;
                }
                return existing(job);
            }
        });
        return new OperationId(id);
    }

    /** The job already recorded under {@code job}'s id or dedupe key, if it is the same job; otherwise a conflict. */
    private Object existing(Encoded job) {
        MongoCollection<Document> primary = jobs.withReadPreference(ReadPreference.primary());
        Document byId = primary.find(eq("_id", job.id())).first();
        String key = job.fields().getString(DEDUPE);
        Document found = byId != null ? byId : key == null ? null : primary.find(eq(DEDUPE, key)).first();
        if (found == null) {
            throw new ConsistencyException(config.name(), job.id(), "enqueue hit a duplicate key but no job holds"
                    + " its id or dedupe key");
        }
        boolean same = Objects.equals(found.getString(TYPE), job.fields().getString(TYPE))
                && samePayload(found.get(PAYLOAD), job.fields().get(PAYLOAD))
                && Objects.equals(found.getString(DEDUPE), key);
        if (!same) {
            String what = byId != null ? "job id " + job.id() : "dedupe key '" + key + "'";
            throw new IdempotencyConflictException(config.name(), job.id(), what + " is already used by a job with"
                    + " another type or payload (" + found.get("_id") + "); nothing was written");
        }
        // found rather than written (perhaps by this call's attempt whose acknowledgement failed): confirm the
        // write concern before reporting it enqueued
        WriteConcerns.confirm(jobs, found.get("_id"), config.name(), "enqueue");
        return found.get("_id");
    }

    /** Equal as stored: both sides compared in BSON, as the database's codecs encode them. */
    private boolean samePayload(Object stored, Object requested) {
        if (stored == null || requested == null) {
            return stored == requested;
        }
        try {
            return Inputs.encode(config.name(), "payload", stored, jobs.getCodecRegistry())
                    .equals(Inputs.encode(config.name(), "payload", requested, jobs.getCodecRegistry()));
        } catch (InvalidInputException e) {
            return false;
        }
    }

    // ---- enqueue with a business write ----------------------------------------------------------------------

    /**
     * Applies {@code businessUpdate} to one business document together with the job, pushed into its
     * {@value #OUTBOX} array in the same atomic write, exactly once however the call's requests are retried and
     * whatever relayers do meanwhile; then relays it. The write runs the {@link OnceEffects} lifecycle: this call
     * first reserves the job id on the document (no effect), then applies the business update and the outbox entry
     * only under its own reservation. A retry after a lost reply therefore finds the reservation consumed, however
     * far a relayer has moved the job on since, and never applies the business update again.
     *
     * @return the job's id if this call (or an earlier call with the same job id) wrote it; empty if the business
     *         document is missing or its filter did not match, in which case nothing was written
     * @throws OutcomeUnknownException if a retried write's outcome can no longer be established (its job is gone
     *                                 from both the document and the queue)
     */
    public Optional<OperationId> enqueueWith(MongoCollection<Document> business, Object documentId,
                                             Bson businessFilter, Bson businessUpdate, Encoded job) {
        String nonce = ownerIds.get();
        Object jobId = job.id();
        List<MarkerWrite> one = List.of(MarkerWrite.of(documentId, null));
        for (int round = 0; ; round++) {
            GuardedResult reserved = config.retryPolicy().execute(config.name(), jobId, "reserve outbox entry",
                    () -> OnceEffects.reserve(business, OUTBOX_MARKER, jobId, nonce, one)).get(documentId);
            if (reserved.outcome() == UpdateOutcome.MISSING) {
                return Optional.empty();
            }
            if (reserved.outcome() == UpdateOutcome.APPLIED) {
                break;
            }
            Document current = reserved.document().orElseThrow();
            EffectMarker.Evidence evidence = OUTBOX_MARKER.evidence(current, jobId, nonce);
            if (evidence == EffectMarker.Evidence.RESERVED) {
                break;
            }
            if (evidence == EffectMarker.Evidence.APPLIED) {
                // an earlier call with this job id wrote it; this call writes nothing more
                relay(business, documentId);
                return Optional.of(job.operationId());
            }
            if (evidence == EffectMarker.Evidence.RESERVED_BY_OTHER && round < 3) {
                // another call holds it without having written (it may have died): its write will now be refused
                String holder = OUTBOX_MARKER.reservedBy(current, jobId);
                if (config.retryPolicy().execute(config.name(), jobId, "take over outbox reservation",
                        () -> OnceEffects.takeOver(business, OUTBOX_MARKER, documentId, jobId, holder, nonce))
                        .isInPlace()) {
                    break;
                }
                continue;
            }
            if (round >= 3) {
                return Optional.empty();
            }
        }
        Document entry = new Document("_id", jobId).append("job", job.fields())
                .append("delayMillis", job.delay().toMillis()).append("n", nonce);
        Bson update = businessUpdate == null ? Updates.push(OUTBOX, entry)
                : Updates.combine(businessUpdate, Updates.push(OUTBOX, entry));
        List<MarkerWrite> write = List.of(new MarkerWrite(documentId, businessFilter, update));
        boolean[] sentBefore = {false};
        GuardedResult written;
        try {
            written = config.retryPolicy().execute(config.name(), jobId, "business write with job", () -> {
                boolean retry = sentBefore[0];
                sentBefore[0] = true;
                GuardedResult r = OnceEffects.apply(business, OUTBOX_MARKER, jobId, nonce, write).get(documentId);
                return retry && r.outcome() == UpdateOutcome.GUARD_FAILED ? retried(r, jobId, nonce) : r;
            });
        } catch (MongoException refused) {
            // the server refused the business update (a validator, a type error): nothing was written, so the call
            // gives its reservation back rather than leave it on the document
            config.retryPolicy().run(config.name(), jobId, "release outbox reservation",
                    () -> OnceEffects.release(business, OUTBOX_MARKER, jobId, nonce, List.of(documentId)));
            throw refused;
        }
        switch (written.outcome()) {
            case APPLIED, ALREADY_APPLIED -> {
                relay(business, documentId);
                return Optional.of(job.operationId());
            }
            case MISSING -> {
                return Optional.empty();
            }
            default -> {
                Document current = written.document().orElse(null);
                if (current != null && OUTBOX_MARKER.evidence(current, jobId, nonce) == EffectMarker.Evidence.RESERVED) {
                    // the business filter did not match: give the reservation back
                    config.retryPolicy().run(config.name(), jobId, "release outbox reservation",
                            () -> OnceEffects.release(business, OUTBOX_MARKER, jobId, nonce, List.of(documentId)));
                }
                return Optional.empty();
            }
        }
    }

    /**
     * A retried business write was refused: an earlier attempt may have applied and a relayer moved the job on since.
     * Applied if the job the relay enqueued carries this call's nonce; still refused if this call's reservation is
     * there; otherwise unknown.
     */
    private GuardedResult retried(GuardedResult refused, Object jobId, String nonce) {
        Document current = refused.document().orElse(null);
        if (current != null && OUTBOX_MARKER.evidence(current, jobId, nonce) != EffectMarker.Evidence.NONE) {
            return refused;
        }
        Document queued = jobs.withReadPreference(ReadPreference.primary())
                .find(and(eq("_id", jobId), eq(OUTBOX_NONCE, nonce))).first();
        if (queued != null) {
            return new GuardedResult(UpdateOutcome.ALREADY_APPLIED, Optional.empty());
        }
        throw new OutcomeUnknownException(config.name(), jobId, "the business write of job " + jobId + " was retried"
                + " after a lost reply and neither the document nor the queue holds it any more; it may or may not have"
                + " been applied", null);
    }

    /**
     * Moves the jobs in {@code documentId}'s outbox into the queue: each is enqueued (idempotently, by its id) and then
     * settled on the document (entry and mark pulled in one write), so a crash between the two only repeats the
     * enqueue.
     *
     * @return jobs moved
     */
    public int relay(MongoCollection<Document> business, Object documentId) {
        Document doc = config.retryPolicy().execute(config.name(), documentId, "read outbox", () -> business
                .withReadPreference(ReadPreference.primary()).find(eq("_id", documentId))
                .projection(Projections.include(OUTBOX)).first());
        return doc == null ? 0 : relayDocument(business, doc);
    }

    /** Relays every business document of {@code business} that carries outboxed jobs. */
    public int relayAll(MongoCollection<Document> business) {
        int moved = 0;
        List<Document> carrying = config.retryPolicy().execute(config.name(), null, "find outboxes", () -> business
                .find(exists(OUTBOX + "._id")).projection(Projections.include(OUTBOX)).into(new ArrayList<>()));
        for (Document doc : carrying) {
            moved += relayDocument(business, doc);
        }
        return moved;
    }

    private int relayDocument(MongoCollection<Document> business, Document doc) {
        int moved = 0;
        for (Object raw : Inputs.arrayOf(doc, OUTBOX)) {
            Encoded job = storedEntry(doc.get("_id"), raw);
            if (job == null) {
                continue;
            }
            Object jobId = job.id();
            enqueue(job);
            Bson pullEntry = Updates.pull(OUTBOX, new Document("_id", jobId));
            GuardedResult settled = config.retryPolicy().execute(config.name(), jobId, "clear outbox",
                    () -> OnceEffects.settle(business, OUTBOX_MARKER, jobId,
                            List.of(MarkerWrite.of(doc.get("_id"), pullEntry))).get(doc.get("_id")));
            if (settled.outcome() == UpdateOutcome.ALREADY_APPLIED
                    && settled.document().map(d -> carries(d, jobId)).orElse(false)) {
                // an entry written by the earlier format, without a mark: pull it alone
                config.retryPolicy().run(config.name(), jobId, "clear outbox", () -> business.updateOne(
                        eq("_id", doc.get("_id")), pullEntry));
            }
            relayed.increment();
            moved++;
        }
        return moved;
    }

    private static boolean carries(Document doc, Object jobId) {
        for (Object e : Inputs.arrayOf(doc, OUTBOX)) {
            if (e instanceof Document d && Objects.equals(d.get("_id"), jobId)) {
                return true;
            }
        }
        return false;
    }

    /**
     * An outbox entry read back from a business document, validated again as input: a collection the application
     * writes to may hold anything. An invalid entry is logged and left alone (never enqueued, never removed).
     */
    private Encoded storedEntry(Object documentId, Object raw) {
        try {
            if (!(raw instanceof Document entry) || !(entry.get("job") instanceof Document fields)) {
                throw new InvalidInputException(config.name(), OUTBOX, "an outbox entry must be {_id, job: {...}}");
            }
            Object jobId = Inputs.operationId(config.name(), OUTBOX + "._id", entry.get("_id"));
            JobRequest request = JobRequest.of(fields.get(TYPE) instanceof String t ? t : null,
                    fields.get(PAYLOAD) instanceof Document p ? p : null).withId(new OperationId(jobId));
            if (fields.get(PRIORITY) instanceof Integer priority) {
                request = request.withPriority(priority);
            }
            if (fields.get(MAX_ATTEMPTS) instanceof Integer max) {
                request = request.withMaxAttempts(max);
            }
            if (fields.get(DEDUPE) instanceof String key) {
                request = request.withDedupeKey(key);
            }
            if (entry.get("delayMillis") instanceof Number delay && delay.longValue() > 0) {
                request = request.delayedBy(Duration.ofMillis(delay.longValue()));
            }
            Encoded encoded = encode(request);
            if (entry.get("n") instanceof String nonce) {
                encoded.fields().append(OUTBOX_NONCE, nonce);
            }
            return encoded;
        } catch (InvalidInputException | IllegalArgumentException | NullPointerException e) {
            LOG.warn("[{}] skipping an invalid outbox entry on document {}: {}", config.name(), documentId,
                    e.getMessage());
            return null;
        }
    }

    // ---- claiming and running -------------------------------------------------------------------------------

    /** A claimed job. */
    public record Claimed(Claim claim, Document job) {

        Object id() {
            return job.get("_id");
        }
    }

    private Bson claimUpdate() {
        return Updates.combine(Updates.set(STATE, JobState.PROCESSING.name()), Updates.inc(ATTEMPTS, 1),
                Updates.currentDate(CLAIMED));
    }

    /** Claims the highest-priority due job, or the given one. */
    public Optional<Claimed> claim(String owner, Object onlyId) {
        List<Bson> filters = new ArrayList<>();
        if (onlyId != null) {
            filters.add(eq("_id", onlyId));
        }
        filters.add(in(STATE, DUE_STATES));
        filters.add(lte(RUN_AT, Date.from(clock.now())));
        Optional<Claim> claim = config.retryPolicy().execute(config.name(), onlyId, "claim job",
                () -> ConditionalUpdates.claim(jobs, and(filters), Sorts.orderBy(Sorts.descending(PRIORITY),
                        Sorts.ascending(RUN_AT)), owner, config.lease(), clock, LEASE_FIELDS, claimUpdate()));
        return claim.map(c -> new Claimed(c, c.document()));
    }

    /** Where running a job left it. */
    public record Ran(Object id, JobState state, boolean lostLease) {
    }

    /** Runs a claimed job's handler and records the outcome, fenced by the claim's token. */
    public Ran run(Claimed claimed) {
        Document job = claimed.job();
        Object id = claimed.id();
        String type = job.getString(TYPE);
        JobHandler handler = handlers.get(type);
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
            error = e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
        }
        LOG.debug("[{}] job {} ({}) attempt {} failed: {}", config.name(), id, type, job.getInteger(ATTEMPTS), error);
        return fail(claimed, error);
    }

    private Ran complete(Claimed claimed, boolean recordedEffects) {
        boolean effects = recordedEffects || !claimed.job().getList(EFFECTS, Object.class, List.of()).isEmpty();
        Bson toDone = Updates.combine(Updates.set(STATE, JobState.DONE.name()), Updates.currentDate(COMPLETED),
                Updates.unset(OWNER), Updates.unset(LEASE));
        GuardedResult r = fenced(claimed, "complete", effects ? Updates.combine(toDone,
                Updates.set(UNSETTLED, true)) : toDone);
        if (isOurs(r, claimed, JobState.DONE)) {
            if (effects) {
                settleEffects(claimed.id(), r.document().orElse(null));
            }
            done.increment();
            notify(() -> listener.onDone(new OperationId(claimed.id()), claimed.job().getString(TYPE)));
            return new Ran(claimed.id(), JobState.DONE, false);
        }
        return lost(claimed);
    }

    private Ran fail(Claimed claimed, String error) {
        Document job = claimed.job();
        int attempt = job.getInteger(ATTEMPTS);
        if (attempt >= job.getInteger(MAX_ATTEMPTS)) {
            return finishDead(claimed, error);
        }
        Date runAt = Date.from(clock.now().plus(backoff(attempt)));
        GuardedResult r = fenced(claimed, "fail", Updates.combine(Updates.set(STATE, JobState.FAILED.name()),
                Updates.set(RUN_AT, runAt), Updates.set(LAST_ERROR, error), Updates.unset(OWNER),
                Updates.unset(LEASE)));
        if (isOurs(r, claimed, JobState.FAILED)) {
            failed.increment();
            notify(() -> listener.onFailed(new OperationId(claimed.id()), job.getString(TYPE), attempt, error));
            return new Ran(claimed.id(), JobState.FAILED, false);
        }
        return lost(claimed);
    }

    private Ran finishDead(Claimed claimed, String error) {
        GuardedResult r = fenced(claimed, "dead", Updates.combine(Updates.set(STATE, JobState.DEAD.name()),
                Updates.set(LAST_ERROR, error), Updates.unset(OWNER), Updates.unset(LEASE)));
        if (isOurs(r, claimed, JobState.DEAD)) {
            dead.increment();
            LOG.warn("[{}] job {} ({}) is dead: {}", config.name(), claimed.id(), claimed.job().getString(TYPE), error);
            notify(() -> listener.onDead(new OperationId(claimed.id()), claimed.job().getString(TYPE), error));
            return new Ran(claimed.id(), JobState.DEAD, false);
        }
        return lost(claimed);
    }

    /**
     * A write on the job fenced by this claim: its token orders the claims of one job, its owner tells apart two jobs
     * enqueued under one id, one after the other was pruned, whose tokens both start again.
     */
    private GuardedResult fenced(Claimed claimed, String what, Bson update) {
        return config.retryPolicy().execute(config.name(), claimed.id(), what,
                () -> ConditionalUpdates.fenced(jobs, claimed.id(), LEASE_FIELDS, claimed.claim().fencingToken(),
                        and(eq(STATE, JobState.PROCESSING.name()), eq(OWNER, claimed.claim().owner())), update));
    }

    /** Applied now, or applied by our own earlier attempt whose reply was lost (same token, target state). */
    private static boolean isOurs(GuardedResult r, Claimed claimed, JobState target) {
        if (r.outcome() == UpdateOutcome.APPLIED) {
            return true;
        }
        Document now = r.document().orElse(null);
        return now != null && target.name().equals(now.getString(STATE))
                && ConditionalUpdates.tokenOf(now, LEASE_FIELDS) == claimed.claim().fencingToken();
    }

    private Ran lost(Claimed claimed) {
        leaseLost.increment();
        notify(() -> listener.onLeaseLost(new OperationId(claimed.id()), claimed.job().getString(TYPE)));
        Document now = jobs.withReadPreference(ReadPreference.primary()).find(eq("_id", claimed.id())).first();
        JobState state = now == null ? JobState.DONE : JobState.valueOf(now.getString(STATE));
        LOG.debug("[{}] job {} was taken over; it is now {}", config.name(), claimed.id(), state);
        return new Ran(claimed.id(), state, true);
    }

    private Duration backoff(int attempt) {
        double nominal = (double) config.retryBackoff().toMillis() * Math.pow(2, Math.max(0, attempt - 1));
        double bounded = Math.min(nominal, (double) config.maxRetryBackoff().toMillis());
        double jittered = bounded * (0.5 + ThreadLocalRandom.current().nextDouble());
        long capped = (long) Math.min(jittered, (double) config.maxRetryBackoff().toMillis());
        return Duration.ofMillis(Math.max(1, capped));
    }

    /** Renews a claimed job's lease. */
    public void heartbeat(Claimed claimed) {
        GuardedResult r = config.retryPolicy().execute(config.name(), claimed.id(), "heartbeat",
                () -> ConditionalUpdates.renew(jobs, claimed.id(), LEASE_FIELDS, claimed.claim().fencingToken(),
                        config.lease(), clock));
        if (r.outcome() != UpdateOutcome.APPLIED) {
            throw new LeaseLostException(config.name(), claimed.id(), claimed.claim().fencingToken(),
                    "another worker took job " + claimed.id() + " over");
        }
    }

    /** Gives a claimed job back (graceful shutdown): {@code TODO} again, due now, the attempt not counted. */
    public boolean release(Claimed claimed) {
        GuardedResult r = config.retryPolicy().execute(config.name(), claimed.id(), "release",
                () -> ConditionalUpdates.release(jobs, claimed.id(), LEASE_FIELDS, claimed.claim().fencingToken(),
                        Updates.combine(Updates.set(STATE, JobState.TODO.name()), Updates.inc(ATTEMPTS, -1),
                                Updates.inc(TOKEN, 1L))));
        return r.outcome() == UpdateOutcome.APPLIED;
    }

    /** The nonce of one claim of a job: its owner and fencing token. */
    private static String nonce(Claimed claimed) {
        return OnceEffects.nonce(claimed.claim().owner(), claimed.claim().fencingToken());
    }

    /**
     * One effect of a job's handler, by the {@link OnceEffects} lifecycle: reserve the document for this claim, check
     * (and record on the job) that the claim still holds the job, then apply under this claim's reservation. A worker
     * that lost its lease, however long ago, cannot apply: its check fails, or its reservation was consumed, released
     * or taken over by the worker that holds the job now.
     */
    private UpdateOutcome applyEffect(Claimed claimed, String collectionName, MongoCollection<Document> target,
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
            tidyLegacy(target, current, jobId);
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
        GuardedResult r = config.retryPolicy().execute(config.name(), jobId, "apply effect",
                () -> OnceEffects.apply(target, EFFECT_MARKER, jobId, nonce,
                        List.of(MarkerWrite.of(documentId, update))).get(documentId));
        if (r.outcome() != UpdateOutcome.GUARD_FAILED) {
            return r.outcome();
        }
        throw new LeaseLostException(config.name(), jobId, claimed.claim().fencingToken(), "another worker took job "
                + jobId + " over before its effect on " + collectionName + "/" + documentId + " applied");
    }

    /**
     * Records {@code documentId} among the job's effects, fenced by the claim's token: the ownership check of the
     * lifecycle, and what lets completion (or {@link #prune}) settle every document the job touched.
     *
     * @return whether this claim still holds the job
     */
    private boolean recordEffect(Claimed claimed, String collectionName, Object documentId) {
        Document effect = new Document("c", collectionName).append("id", documentId);
        long matched = config.retryPolicy().execute(config.name(), claimed.id(), "record effect", () -> jobs.updateOne(
                and(eq("_id", claimed.id()), eq(TOKEN, claimed.claim().fencingToken()),
                        eq(OWNER, claimed.claim().owner()), eq(STATE, JobState.PROCESSING.name())),
                Updates.addToSet(EFFECTS, effect)).getMatchedCount());
        return matched == 1;
    }

    /**
     * Settles a done job's effects: pulls its applied mark (and any reservation an earlier claim left) from every
     * document it recorded. Best effort: {@link #prune} settles what a crash left.
     */
    private void settleEffects(Object jobId, Document job) {
        Map<String, List<Object>> byCollection = new HashMap<>();
        for (Object e : job == null ? List.of() : job.getList(EFFECTS, Object.class, List.of())) {
            if (e instanceof Document d && d.get("c") instanceof String c && d.get("id") != null) {
                byCollection.computeIfAbsent(c, k -> new ArrayList<>()).add(d.get("id"));
            }
        }
        for (Map.Entry<String, List<Object>> group : byCollection.entrySet()) {
            MongoCollection<Document> target = collections.computeIfAbsent(group.getKey(), database::getCollection);
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
        config.retryPolicy().run(config.name(), jobId, "effects settled", () -> jobs.updateOne(
                and(eq("_id", jobId), eq(UNSETTLED, true)), Updates.unset(UNSETTLED)));
    }

    /** Settles the effects of done jobs whose worker died before it could, oldest first. */
    private int settleDone() {
        List<Document> unsettled = config.retryPolicy().execute(config.name(), null, "find unsettled jobs",
                () -> jobs.find(eq(UNSETTLED, true)).projection(Projections.include(STATE, EFFECTS)).limit(1_000)
                        .into(new ArrayList<>()));
        int settled = 0;
        for (Document job : unsettled) {
            if (JobState.DONE.name().equals(job.getString(STATE))) {
                settleEffects(job.get("_id"), job);
                settled++;
            }
        }
        return settled;
    }

    /**
     * Marks of the earlier format (kept forever) are removed as they are met: when a document carries more than a
     * few applied marks, those of jobs that are done (or pruned) are pulled. A done job never runs again.
     */
    private void tidyLegacy(MongoCollection<Document> target, Document current, Object jobId) {
        List<?> applied = Inputs.arrayOf(current, APPLIED_JOBS);
        if (applied.size() <= TIDY_THRESHOLD) {
            return;
        }
        // read back from a business document: only values that are job ids reach the query
        List<Object> others = applied.stream().filter(id -> !Objects.equals(id, jobId))
                .filter(Inputs::isOperationId).map(id -> (Object) id).distinct().toList();
        if (others.isEmpty()) {
            return;
        }
        Set<Object> notDone = new HashSet<>();
        jobs.withReadPreference(ReadPreference.primary()).find(and(in("_id", others),
                ne(STATE, JobState.DONE.name()))).projection(Projections.include("_id"))
                .forEach(d -> notDone.add(Inputs.idKey(d.get("_id"))));
        List<Object> done = others.stream().filter(id -> !notDone.contains(Inputs.idKey(id))).toList();
        if (!done.isEmpty()) {
            LOG.info("[{}] removing {} marks of done jobs from document {}", config.name(), done.size(),
                    current.get("_id"));
            config.retryPolicy().run(config.name(), current.get("_id"), "tidy marks", () -> target.updateOne(
                    eq("_id", current.get("_id")), Updates.pullAll(APPLIED_JOBS, done)));
        }
    }

    private final class Context implements JobContext {
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
        public int attempt() {
            return claimed.job().getInteger(ATTEMPTS);
        }

        @Override
        public long fencingToken() {
            return claimed.claim().fencingToken();
        }

        @Override
        public UpdateOutcome applyOnce(String collection, Object documentId, Bson update) {
            Inputs.fieldName(config.name(), "collection", collection);
            MongoCollection<Document> target = collections.computeIfAbsent(collection, database::getCollection);
            Object id = Inputs.documentId(config.name(), "documentId", documentId, target.getCodecRegistry());
            BsonDocument checked = Inputs.updateSpec(config.name(), "update", update, target.getCodecRegistry(),
                    EFFECT_FIELDS);
            recorded = true;
            return applyEffect(claimed, collection, target, id, checked);
        }

        @Override
        public void heartbeat() {
            JobEngine.this.heartbeat(claimed);
        }
    }

    // ---- entry points ---------------------------------------------------------------------------------------

    /** Enqueues {@code job} and runs it in this thread when it is due and free. */
    public OperationResult apply(Encoded job) {
        OperationId id = enqueue(job);
        Optional<Claimed> claimed = claim(newOwner(), id.value());
        if (claimed.isPresent()) {
            return toResult(run(claimed.get()));
        }
        Document now = jobs.withReadPreference(ReadPreference.primary()).find(eq("_id", id.value())).first();
        JobState state = now == null ? JobState.TODO : JobState.valueOf(now.getString(STATE));
        return toResult(new Ran(id.value(), state, false), now);
    }

    private OperationResult toResult(Ran ran) {
        Document now = ran.state() == JobState.DEAD
                ? jobs.withReadPreference(ReadPreference.primary()).find(eq("_id", ran.id())).first() : null;
        return toResult(ran, now);
    }

    private static OperationResult toResult(Ran ran, Document job) {
        OperationId id = new OperationId(ran.id());
        return switch (ran.state()) {
            case DONE -> OperationResult.committed(id, JobState.DONE.name());
            case DEAD -> OperationResult.aborted(id, JobState.DEAD.name(), job == null ? "dead"
                    : job.getString(LAST_ERROR));
            default -> OperationResult.inFlight(id, ran.state().name());
        };
    }

    /** Claims and runs one due job. */
    public Optional<OperationResult> processNext(String owner) {
        return claim(owner, null).map(this::run).map(this::toResult);
    }

    // ---- sweeping and recovery ------------------------------------------------------------------------------

    /**
     * Requeues every {@code PROCESSING} job whose lease expired (every one, when {@code all}), or sends it dead if that
     * was its last attempt; each by a compare-and-set on its fencing token, which it also bumps.
     *
     * @return {@code [requeued, dead, skipped]}
     */
    public int[] sweep(boolean all) {
        Bson filter = all ? eq(STATE, JobState.PROCESSING.name())
                : and(eq(STATE, JobState.PROCESSING.name()), lte(LEASE, Date.from(clock.now())));
        int[] counts = new int[3];
        for (Document job : jobs.find(filter).projection(Projections.include(TYPE, TOKEN, ATTEMPTS, MAX_ATTEMPTS))
                .into(new ArrayList<>())) {
            Object id = job.get("_id");
            boolean last = job.getInteger(ATTEMPTS, 0) >= job.getInteger(MAX_ATTEMPTS, config.maxAttempts());
            Bson update = last
                    ? Updates.combine(Updates.set(STATE, JobState.DEAD.name()), Updates.set(LAST_ERROR,
                    "the worker lost its lease on the last attempt"), Updates.unset(OWNER), Updates.unset(LEASE),
                    Updates.inc(TOKEN, 1L))
                    : Updates.combine(Updates.set(STATE, JobState.TODO.name()), Updates.set(LAST_ERROR,
                    "the worker lost its lease"), Updates.unset(OWNER), Updates.unset(LEASE),
                    Updates.inc(TOKEN, 1L));
            long token = ConditionalUpdates.tokenOf(job, LEASE_FIELDS);
            // the lease is checked again in the compare-and-set: a worker that renewed it since it was read keeps it
            Bson guard = all ? eq(STATE, JobState.PROCESSING.name())
                    : and(eq(STATE, JobState.PROCESSING.name()), lte(LEASE, Date.from(clock.now())));
            GuardedResult r = config.retryPolicy().execute(config.name(), id, "sweep",
                    () -> ConditionalUpdates.fenced(jobs, id, LEASE_FIELDS, token, guard, update));
            Document now = r.document().orElse(null);
            boolean ours = r.outcome() == UpdateOutcome.APPLIED || (now != null
                    && ConditionalUpdates.tokenOf(now, LEASE_FIELDS) == token + 1
                    && !JobState.PROCESSING.name().equals(now.getString(STATE)));
            if (!ours) {
                counts[2]++;
            } else if (last) {
                counts[1]++;
                dead.increment();
                notify(() -> listener.onDead(new OperationId(id), job.getString(TYPE),
                        "the worker lost its lease on the last attempt"));
            } else {
                counts[0]++;
                requeued.increment();
                notify(() -> listener.onRequeued(new OperationId(id), job.getString(TYPE)));
            }
        }
        if (counts[0] + counts[1] > 0) {
            LOG.info("[{}] sweeper: {} jobs requeued, {} dead after losing their worker", config.name(), counts[0],
                    counts[1]);
        }
        return counts;
    }

    /**
     * Requeues jobs whose worker went quiet (every {@code PROCESSING} job when {@code staleAfter} is zero, otherwise
     * those whose lease expired), then runs, in this thread, every job that has been due for {@code staleAfter}.
     */
    public RecoveryReport recover(Duration staleAfter) {
        Objects.requireNonNull(staleAfter, "staleAfter");
        Checks.notNegative("staleAfter", staleAfter);
        long start = System.nanoTime();
        int[] swept = sweep(staleAfter.isZero());
        int examined = swept[0] + swept[1] + swept[2];
        int forward = 0;
        int back = swept[1];
        int skipped = swept[2];
        String owner = newOwner();
        Set<Object> seen = new HashSet<>();
        Date cutoff = Date.from(clock.now().minus(staleAfter));
        while (true) {
            List<Document> due = jobs.find(and(in(STATE, DUE_STATES), lte(RUN_AT, cutoff)))
                    .projection(Projections.include(STATE)).sort(Sorts.ascending(RUN_AT)).limit(100)
                    .into(new ArrayList<>());
            due.removeIf(d -> !seen.add(d.get("_id")));
            if (due.isEmpty()) {
                break;
            }
            for (Document d : due) {
                examined++;
                Optional<Claimed> claimed = claim(owner, d.get("_id"));
                if (claimed.isEmpty()) {
                    skipped++;
                    continue;
                }
                switch (run(claimed.get()).state()) {
                    case DONE -> forward++;
                    case DEAD -> back++;
                    default -> skipped++;
                }
            }
        }
        settleDone();
        releaseAbandoned();
        return new RecoveryReport(config.name(), examined, forward, back, skipped,
                Duration.ofNanos(System.nanoTime() - start));
    }

    // ---- status, retention, replay, indexes -----------------------------------------------------------------

    /**
     * Jobs a worker claimed and went quiet on: every {@code PROCESSING} job when {@code staleAfter} is zero, otherwise
     * those whose lease expired, as {@link #recover} requeues them. Queued jobs are waiting, not interrupted.
     */
    public List<InterruptedOperation> interrupted(Duration staleAfter, int limit) {
        Bson filter = staleAfter.isZero() ? eq(STATE, JobState.PROCESSING.name())
                : and(eq(STATE, JobState.PROCESSING.name()), lte(LEASE, Date.from(clock.now())));
        List<InterruptedOperation> out = new ArrayList<>();
        for (Document job : jobs.find(filter).projection(Projections.include(TYPE, OWNER, CLAIMED))
                .sort(Sorts.ascending(CLAIMED)).limit(limit)) {
            Date claimed = job.getDate(CLAIMED);
            out.add(new InterruptedOperation(job.get("_id"), JobState.PROCESSING.name(),
                    claimed == null ? Duration.ZERO : clock.ageOf(claimed.toInstant()),
                    "type " + job.getString(TYPE) + ", claimed by " + job.get(OWNER)));
        }
        return out;
    }

    /** Counts per state, and the age of the oldest due job (the queue's lag). */
    public StrategyStatus status() {
        Map<String, Long> counts = new HashMap<>();
        for (JobState s : JobState.values()) {
            long n = jobs.countDocuments(eq(STATE, s.name()));
            if (n > 0) {
                counts.put(s.name(), n);
            }
        }
        long inFlight = JobState.IN_FLIGHT.stream().mapToLong(s -> counts.getOrDefault(s.name(), 0L)).sum();
        Optional<Duration> lag = oldestDueAge();
        if (lag.isEmpty()) {
            Document processing = jobs.find(eq(STATE, JobState.PROCESSING.name()))
                    .projection(Projections.include(CLAIMED)).sort(Sorts.ascending(CLAIMED)).first();
            lag = Optional.ofNullable(processing).map(d -> d.getDate(CLAIMED))
                    .map(date -> clock.ageOf(date.toInstant()));
        }
        return new StrategyStatus(config.name(), counts, inFlight, lag);
    }

    /** How long the oldest due job has been waiting. */
    public Optional<Duration> oldestDueAge() {
        Document oldest = jobs.find(and(in(STATE, DUE_STATES), lte(RUN_AT, Date.from(clock.now()))))
                .projection(Projections.include(RUN_AT)).sort(Sorts.ascending(RUN_AT)).first();
        return Optional.ofNullable(oldest).map(d -> clock.ageOf(d.getDate(RUN_AT).toInstant()));
    }

    /** Counts per state and type. */
    public Map<String, Map<String, Long>> countsByType() {
        Map<String, Map<String, Long>> counts = new HashMap<>();
        for (JobState s : JobState.values()) {
            for (Document d : jobs.aggregate(List.of(
                    com.mongodb.client.model.Aggregates.match(eq(STATE, s.name())),
                    com.mongodb.client.model.Aggregates.group("$" + TYPE,
                            com.mongodb.client.model.Accumulators.sum("n", 1L))))) {
                counts.computeIfAbsent(s.name(), k -> new HashMap<>()).put(String.valueOf(d.get("_id")),
                        ((Number) d.get("n")).longValue());
            }
        }
        return counts;
    }

    /** Deletes {@code DONE} jobs completed more than {@code retention} ago whose effects are settled. */
    public long prune(Duration retention) {
        long n = config.retryPolicy().execute(config.name(), null, "prune", () -> jobs.deleteMany(and(
                eq(STATE, JobState.DONE.name()), lte(COMPLETED, clock.cutoff(retention)), exists(UNSETTLED, false)))
                .getDeletedCount());
        pruned.add(n);
        return n;
    }

    /** The collections any job recorded an effect in (a distinct over an indexed field). */
    private List<String> effectCollections() {
        List<String> names = new ArrayList<>();
        for (String name : config.retryPolicy().execute(config.name(), null, "list effect collections",
                () -> jobs.distinct(EFFECTS + ".c", String.class).into(new ArrayList<>()))) {
            if (name != null) {
                names.add(name);
            }
        }
        return names;
    }

    /**
     * Releases the reservations on documents that no live claim holds: an earlier claim's, or a late one a paused
     * worker sent and died before releasing. Releasing a reservation is always safe: it is never applied after.
     *
     * @return reservations released
     */
    private int releaseAbandoned() {
        int removed = 0;
        for (String name : effectCollections()) {
            MongoCollection<Document> target = collections.computeIfAbsent(name, database::getCollection);
            List<OnceEffects.Reservation> reservations = config.retryPolicy().execute(config.name(), null,
                    "find reservations in " + name, () -> OnceEffects.reservations(target, EFFECT_MARKER, 1_000));
            if (reservations.isEmpty()) {
                continue;
            }
            List<Object> ids = reservations.stream().map(OnceEffects.Reservation::operationId).distinct().toList();
            Map<Object, Document> byId = new HashMap<>();
            config.retryPolicy().run(config.name(), null, "read reserving jobs", () -> jobs
                    .withReadPreference(ReadPreference.primary()).find(in("_id", ids))
                    .projection(Projections.include(STATE, OWNER, TOKEN))
                    .forEach(d -> byId.put(Inputs.idKey(d.get("_id")), d)));
            for (OnceEffects.Reservation r : reservations) {
                Document job = byId.get(Inputs.idKey(r.operationId()));
                boolean held = job != null && JobState.PROCESSING.name().equals(job.getString(STATE))
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

    /** Puts a dead job back in the queue: {@code TODO}, due now, attempts from zero. */
    public boolean replay(Object id) {
        Inputs.operationId(config.name(), "id", id);
        GuardedResult r = config.retryPolicy().execute(config.name(), id, "replay",
                () -> ConditionalUpdates.transition(jobs, id, Transition.of(STATE, JobState.DEAD.name(),
                        JobState.TODO.name()).alsoUpdating(Updates.combine(Updates.set(ATTEMPTS, 0),
                        Updates.set(RUN_AT, Date.from(clock.now())), Updates.inc(TOKEN, 1L)))));
        return r.outcome() == UpdateOutcome.APPLIED;
    }

    /** Creates the indexes the queue's queries need on a real server. */
    public void ensureIndexes() {
        jobs.createIndex(Indexes.compoundIndex(Indexes.ascending(STATE), Indexes.descending(PRIORITY),
                Indexes.ascending(RUN_AT)), new IndexOptions().name("claim_order"));
        jobs.createIndex(Indexes.ascending(STATE, RUN_AT), new IndexOptions().name("due"));
        jobs.createIndex(Indexes.ascending(STATE, LEASE), new IndexOptions().name("lease_expiry"));
        jobs.createIndex(Indexes.ascending(STATE, COMPLETED), new IndexOptions().name("retention"));
        jobs.createIndex(Indexes.ascending(STATE, CLAIMED), new IndexOptions().name("processing_age"));
        jobs.createIndex(Indexes.ascending(DEDUPE), new IndexOptions().name("dedupe").unique(true).sparse(true));
        jobs.createIndex(Indexes.ascending(EFFECTS + ".c"), new IndexOptions().name("effect_collections").sparse(true));
        jobs.createIndex(Indexes.ascending(UNSETTLED), new IndexOptions().name("unsettled").sparse(true));
        for (String name : effectCollections()) {
            ensureEffectIndexes(database.getCollection(name));
        }
        PatternRegistry.register(database, new PatternRegistry.Registration("job-queue", config.name(),
                Map.of("jobs", config.collection()), Map.of()));
    }

    /** The index a business collection's outbox relay needs. */
    public static void ensureOutboxIndex(MongoCollection<Document> business) {
        business.createIndex(Indexes.ascending(OUTBOX + "._id"), new IndexOptions().name("job_outbox").sparse(true));
    }

    /** The index recovery's release of abandoned reservations needs on a collection handlers change. */
    public static void ensureEffectIndexes(MongoCollection<Document> target) {
        OnceEffects.ensureIndex(target, EFFECT_MARKER);
    }

    /** The metrics snapshot. */
    public JobQueueMetrics metrics() {
        return new JobQueueMetrics(enqueued.sum(), done.sum(), failed.sum(), dead.sum(), requeued.sum(),
                leaseLost.sum(), relayed.sum(), pruned.sum());
    }

    /** The registered job types. */
    public Set<String> types() {
        return handlers.keySet();
    }

    private void notify(Runnable call) {
        Listeners.call(config.name(), call);
    }
}
