package dev.consistencykit.jobqueue.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lte;
import static dev.consistencykit.jobqueue.internal.JobSchema.CLAIMED;
import static dev.consistencykit.jobqueue.internal.JobSchema.CLAIM_AT;
import static dev.consistencykit.jobqueue.internal.JobSchema.COMPLETED;
import static dev.consistencykit.jobqueue.internal.JobSchema.DEDUPE;
import static dev.consistencykit.jobqueue.internal.JobSchema.EFFECTS;
import static dev.consistencykit.jobqueue.internal.JobSchema.EFFECT_MARKER;
import static dev.consistencykit.jobqueue.internal.JobSchema.ENQUEUED;
import static dev.consistencykit.jobqueue.internal.JobSchema.HELD;
import static dev.consistencykit.jobqueue.internal.JobSchema.HELD_FROM;
import static dev.consistencykit.jobqueue.internal.JobSchema.LEASE;
import static dev.consistencykit.jobqueue.internal.JobSchema.LEASE_FIELDS;
import static dev.consistencykit.jobqueue.internal.JobSchema.NEXT;
import static dev.consistencykit.jobqueue.internal.JobSchema.OUTBOX;
import static dev.consistencykit.jobqueue.internal.JobSchema.OUTBOX_MARKER;
import static dev.consistencykit.jobqueue.internal.JobSchema.OUTBOX_NONCE;
import static dev.consistencykit.jobqueue.internal.JobSchema.OWNER;
import static dev.consistencykit.jobqueue.internal.JobSchema.PRIORITY;
import static dev.consistencykit.jobqueue.internal.JobSchema.REMOVED;
import static dev.consistencykit.jobqueue.internal.JobSchema.REVISION;
import static dev.consistencykit.jobqueue.internal.JobSchema.RUN_AT;
import static dev.consistencykit.jobqueue.internal.JobSchema.STATE;
import static dev.consistencykit.jobqueue.internal.JobSchema.TOKEN;
import static dev.consistencykit.jobqueue.internal.JobSchema.TYPE;
import static dev.consistencykit.jobqueue.internal.JobSchema.UNSETTLED;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.bson.BsonValue;
import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;

import com.mongodb.MongoException;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.CountOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.result.UpdateResult;

import dev.consistencykit.core.KeptRecord;
import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.Claim;
import dev.consistencykit.core.spi.ConditionalUpdates;
import dev.consistencykit.core.spi.GuardedResult;
import dev.consistencykit.core.spi.MongoErrors;
import dev.consistencykit.core.spi.Names;
import dev.consistencykit.core.spi.OnceEffects;
import dev.consistencykit.core.spi.PatternRegistry;
import dev.consistencykit.core.spi.PatternSetup;
import dev.consistencykit.core.spi.ReadSettings;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.core.spi.RequiredIndexes;
import dev.consistencykit.core.spi.StateSnapshot;
import dev.consistencykit.core.spi.Transition;
import dev.consistencykit.core.spi.WriteConcerns;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobState;

/**
 * The only owner of the job queue's collections — the jobs, the business collections whose outboxes it relays, and
 * the collections its handlers change once — offering the writes of a job by name (record, claim, fence, renew, give
 * back, record an effect, settle, release or withdraw a held job, replay, discard, prune) and the reads its parts make.
 * Writes on business documents go through {@link OnceEffects} on the collection {@link #collection} hands out. It also
 * holds what this instance recorded and has not released yet ({@link RecordReleases}): its enqueues, and the jobs its
 * outbox calls wrote.
 */
public final class JobStore implements PatternSetup {

    private final JobQueueConfig config;
    private final String name;
    private final RetryPolicy retry;
    private final MongoDatabase database;
    private final MongoCollection<Document> jobs;
    private final MongoCollection<Document> schedules;
    private final MongoCollection<Document> keys;
    private final Map<String, MongoCollection<Document>> collections = new ConcurrentHashMap<>();
    /** The unique dedupe index: what makes two jobs with one dedupe key collide, checked before such a write. */
    private final RequiredIndexes requiredIndexes;
    /** Where the queue's collections may live on a sharded cluster, checked before the instance's first write. */
    private final RequiredIndexes placements;
    /** Jobs this instance recorded, to release so that pruning may remove them once done. */
    private final RecordReleases releases;
    /** Jobs relayed from outbox calls of this instance, to release once those calls will not write again. */
    private final RecordReleases outboxHolds;

    /** The collections of {@code config} in {@code database} (already checked for an acknowledged write concern). */
    public JobStore(JobQueueConfig config, MongoDatabase database) {
        this.database = ReadSettings.ownReads(database);
        this.config = config;
        this.name = config.name();
        this.retry = config.retryPolicy();
        this.jobs = this.database.getCollection(config.collection());
        this.schedules = this.database.getCollection(config.schedulesCollection());
        this.keys = this.database.getCollection(config.keysCollection());
        this.releases = new RecordReleases(name, jobs, retry);
        this.outboxHolds = new RecordReleases(name, jobs, retry, OUTBOX_NONCE);
        this.requiredIndexes = new RequiredIndexes(name, List.of(new RequiredIndexes.Unique(jobs, "dedupe",
                List.of(DEDUPE), true, null)));
        this.placements = new RequiredIndexes(name, this.database, List.of(), List.of(
                RequiredIndexes.Placement.unsharded(jobs, "claims the next job with findOneAndUpdate by state,"
                        + " priority and due time, which a sharded collection refuses without its shard key"),
                RequiredIndexes.Placement.byId(keys, "keeps one line per ordering or concurrency key by _id, and"
                        + " keeps _id unique across shards only on a shard key led by _id"),
                RequiredIndexes.Placement.byId(schedules, "keeps one document per schedule by _id, and keeps _id"
                        + " unique across shards only on a shard key led by _id")));
    }

    // ---------------------------------------------------------------- setup and holds

    /** Creates the indexes the queue's queries need on a real server, and registers the instance. */
    @Override
    public void ensureIndexes() {
        jobs.createIndex(Indexes.compoundIndex(Indexes.ascending(STATE), Indexes.descending(PRIORITY),
                Indexes.ascending(RUN_AT)), new IndexOptions().name("claim_order"));
        // the claim's: its filter names no path but claimAt that an index holds (the state is in claimAt, the lease
        // index is partial on processing jobs and the held one is on heldFrom), so the real engine's planner, which
        // reads each path of a compound index on its own and ANDs whatever indexes a filter's paths have, reads the
        // due claimable jobs alone (docs/servers.md)
        jobs.createIndex(Indexes.compoundIndex(Indexes.descending(PRIORITY), Indexes.ascending(CLAIM_AT)),
                new IndexOptions().name("claim_next"));
        jobs.createIndex(Indexes.ascending(STATE, RUN_AT), new IndexOptions().name("due"));
        jobs.createIndex(Indexes.ascending(STATE, LEASE), new IndexOptions().name("lease_expiry")
                .partialFilterExpression(eq(STATE, JobState.PROCESSING.stored())));
        jobs.createIndex(Indexes.ascending(STATE, COMPLETED), new IndexOptions().name("retention"));
        jobs.createIndex(Indexes.ascending(STATE, CLAIMED), new IndexOptions().name("processing_age"));
        // an operator's search across states (JobQueueOperator.jobs), newest first: by type (written once, at the
        // insert), and by state
        jobs.createIndex(Indexes.compoundIndex(Indexes.ascending(TYPE), Indexes.descending(ENQUEUED)),
                new IndexOptions().name("type_enqueued"));
        jobs.createIndex(Indexes.compoundIndex(Indexes.ascending(STATE), Indexes.descending(ENQUEUED)),
                new IndexOptions().name("state_enqueued"));
        requiredIndexes.create();
        placements.create();
        jobs.createIndex(Indexes.ascending(EFFECTS + ".c"), new IndexOptions().name("effect_collections")
                .sparse(true));
        jobs.createIndex(Indexes.ascending(UNSETTLED), new IndexOptions().name("unsettled").sparse(true));
        jobs.createIndex(Indexes.ascending(HELD_FROM), new IndexOptions().name("held").sparse(true));
        RecordReleases.ensureIndex(jobs);
        schedules.createIndex(Indexes.ascending(NEXT), new IndexOptions().name("due_schedules").sparse(true));
        schedules.createIndex(Indexes.ascending(REMOVED), new IndexOptions().name("removed_schedules").sparse(true));
        ensureOutboxIndex(schedules);
        keys.createIndex(Indexes.ascending(JobSchema.MOVED), new IndexOptions().name("key_moved"));
        for (String collection : effectCollections()) {
            ensureEffectIndexes(collection(collection));
        }
        PatternRegistry.register(database, new PatternRegistry.Registration("job-queue", config.name(),
                Map.of("jobs", config.collection(), "schedules", config.schedulesCollection(),
                "keys", config.keysCollection()), Map.of()));
    }

    /** The index a business collection's outbox relay needs. */
    public static void ensureOutboxIndex(MongoCollection<Document> business) {
        business.createIndex(Indexes.ascending(OUTBOX + "._id"), new IndexOptions().name("job_outbox").sparse(true));
        OnceEffects.ensureIndex(business, OUTBOX_MARKER);
    }

    /** The index recovery's release of abandoned reservations needs on a collection handlers change. */
    public static void ensureEffectIndexes(MongoCollection<Document> target) {
        OnceEffects.ensureIndex(target, EFFECT_MARKER);
    }

    @Override
    public List<String> setupProblems() {
        List<String> problems = new ArrayList<>(requiredIndexes.problems());
        problems.addAll(placements.problems());
        return problems;
    }

    /** Releases the jobs this instance recorded, and those it wrote by an outbox call, that it still holds. */
    @Override
    public void close() {
        releases.flush();
        outboxHolds.flush();
    }

    /** Releases the jobs this instance recorded and still holds (not those of its outbox calls). */
    void releaseRecorded() {
        releases.flush();
    }

    /** Throws unless the unique dedupe index exists (checked once, then remembered). */
    void verifyIndexes() {
        requiredIndexes.verify();
    }

    /** Throws if a collection of the queue is sharded in a way its writes cannot live with (checked once). */
    void verifyPlacements() {
        placements.verify();
    }

    /** Notes that this instance recorded job {@code id} with {@code nonce}: it is held until released. */
    void recorded(Object id, String nonce) {
        releases.written(id, nonce);
    }

    /** Notes that an outbox call {@code nonce} of this instance wrote job {@code id}: held until released. */
    void outboxWrote(Object id, String nonce) {
        outboxHolds.written(id, nonce);
    }

    /** Held jobs enqueued before {@code cutoff}: see {@link RecordReleases#kept}. */
    List<KeptRecord> kept(ServerClock clock, Date cutoff, int limit) {
        return RecordReleases.kept(jobs, ENQUEUED, clock, cutoff, limit);
    }

    /** The application's codecs. */
    CodecRegistry codecs() {
        return jobs.getCodecRegistry();
    }

    /** A business or effect collection; built once per name, since the driver builds a new object per call. */
    MongoCollection<Document> collection(String collection) {
        return collections.computeIfAbsent(collection, database::getCollection);
    }

    // ---------------------------------------------------------------- recording

    /**
     * Inserts job {@code id} with {@code update} unless a document of that id exists; true if this request inserted
     * it. Not retried (the caller's retry decides what a duplicate means); throws the server's duplicate-key error.
     */
    boolean insertJob(Object id, Bson update) {
        UpdateResult r = jobs.updateOne(and(eq("_id", id), exists(STATE, false)), update,
                new UpdateOptions().upsert(true));
        return r.getUpsertedId() != null;
    }

    /** Job {@code id} from the primary; {@code null} if none. Not retried. */
    Document readPrimary(Object id) {
        return jobs.withReadPreference(ReadPreference.primary()).find(eq("_id", id)).first();
    }

    /** Job {@code id} as a read finds it; {@code null} if none. Not retried. */
    Document read(Object id) {
        return jobs.find(eq("_id", id)).first();
    }

    /** The job holding dedupe key {@code key}, from the primary, with {@code fields} (all when none). Not retried. */
    Document byDedupeKey(String key, String... fields) {
        var find = jobs.withReadPreference(ReadPreference.primary()).find(eq(DEDUPE, key));
        return (fields.length == 0 ? find : find.projection(Projections.include(fields))).first();
    }

    /** Waits until job {@code id}, found rather than written, is as durable as the write concern asks. */
    void confirm(Object id, String what) {
        WriteConcerns.confirm(jobs, id, name, what);
    }

    // ---------------------------------------------------------------- outbox relay

    /** Whether the queue holds job {@code jobId} written by the outbox call {@code nonce}, from the primary. */
    boolean queuedFor(Object jobId, String nonce) {
        return jobs.withReadPreference(ReadPreference.primary()).find(and(eq("_id", jobId), eq(OUTBOX_NONCE, nonce)))
                .projection(Projections.include("_id")).first() != null;
    }

    /** Whether the queue holds job {@code jobId}, from the primary. Not retried. */
    boolean holds(Object jobId) {
        return jobs.withReadPreference(ReadPreference.primary()).find(eq("_id", jobId))
                .projection(Projections.include("_id")).first() != null;
    }

    /** Withdraws the job a relayer recorded and still holds, if it is still this relayer's ({@code nonce}). */
    long withdrawRelayed(Object jobId, String nonce) {
        return retry.execute(name, jobId, "withdraw relayed job", () -> ConditionalUpdates.delete(jobs, jobId,
                and(eq(RecordReleases.FIELD, nonce), eq(HELD, nonce))));
    }

    /** Releases the held job {@code jobId} to the workers (held by {@code nonce} only, when not null). Not retried. */
    void releaseHeld(Object jobId, String nonce) {
        jobs.updateOne(and(eq("_id", jobId), nonce == null ? exists(HELD, true) : eq(HELD, nonce)),
                Updates.combine(Updates.unset(HELD), Updates.unset(HELD_FROM)));
    }

    /**
     * Jobs held by a relayer since before {@code cutoff}, at most {@code limit}, by the {@code held} index (on the
     * held job's origin, which a relayer writes and removes with its hold: an index on the hold itself would be read
     * for the claim's "not held").
     */
    List<Document> heldBefore(Date cutoff, int limit, String... fields) {
        return retry.execute(name, null, "find held jobs", () -> jobs.find(and(exists(HELD_FROM, true),
                lte(ENQUEUED, cutoff))).projection(Projections.include(fields)).limit(limit).into(new ArrayList<>()));
    }

    /** Withdraws a held job whose outbox entry is gone, if {@code nonce} still holds it and it never ran. */
    long withdrawHeld(Object jobId, String nonce) {
        return retry.execute(name, jobId, "withdraw held job", () -> ConditionalUpdates.delete(jobs, jobId,
                and(eq(HELD, nonce), in(STATE, JobState.TODO.stored(), JobState.AWAITING.stored()))));
    }

    // ---------------------------------------------------------------- claims and runs

    /**
     * Claims the first job {@code filter} matches in priority order for {@code owner}, with {@code update}. A retry
     * looks first for what its earlier attempt claimed: its reply may have been lost, and the job would stay claimed
     * by this owner, run by no one, until its lease ran out.
     */
    Optional<Claim> claim(Object operationId, Bson filter, String owner, Duration lease, ServerClock clock,
                          Bson update) {
        verifyPlacements();
        AtomicInteger attempts = new AtomicInteger();
        return retry.execute(name, operationId, "claim job", () -> {
            Optional<Claim> mine = attempts.getAndIncrement() > 0 ? ConditionalUpdates.heldBy(jobs,
                    eq(STATE, JobState.PROCESSING.stored()), owner, LEASE_FIELDS) : Optional.empty();
            return mine.isPresent() ? mine : ConditionalUpdates.claim(jobs, filter, Sorts.orderBy(
                    Sorts.descending(PRIORITY), Sorts.ascending(CLAIM_AT)), owner, lease, clock, LEASE_FIELDS, update);
        });
    }

    /** {@code update} on job {@code id} if its fencing token is still {@code token} and {@code guard} holds. */
    GuardedResult fenced(Object id, long token, Bson guard, Bson update) {
        return ConditionalUpdates.fenced(jobs, id, LEASE_FIELDS, token, guard, update);
    }

    /** Renews the lease of job {@code id} held with {@code token}. */
    GuardedResult renew(Object id, long token, Duration lease, ServerClock clock) {
        return ConditionalUpdates.renew(jobs, id, LEASE_FIELDS, token, lease, clock);
    }

    /** Gives job {@code id} back with {@code update} if {@code token} still holds it. */
    GuardedResult giveBack(Object id, long token, Bson update) {
        return ConditionalUpdates.release(jobs, id, LEASE_FIELDS, token, update);
    }

    /** Adds {@code effect} to a processing job still held by {@code owner} with {@code token}; whether it matched. */
    boolean recordEffect(Object id, long token, String owner, Document effect) {
        return retry.execute(name, id, "record effect", () -> jobs.updateOne(and(eq("_id", id), eq(TOKEN, token),
                eq(OWNER, owner), eq(STATE, JobState.PROCESSING.stored())), Updates.addToSet(EFFECTS, effect))
                .getMatchedCount()) == 1;
    }

    /** Notes that a done job's effects are settled. */
    void settled(Object jobId) {
        retry.run(name, jobId, "effects settled", () -> jobs.updateOne(and(eq("_id", jobId), eq(UNSETTLED, true)),
                Updates.unset(UNSETTLED)));
    }

    /** Jobs whose effects are still to be settled, with their state and effects: at most 1,000. */
    List<Document> unsettled() {
        return retry.execute(name, null, "find unsettled jobs", () -> jobs.find(eq(UNSETTLED, true))
                .projection(Projections.include(STATE, EFFECTS)).limit(1_000).into(new ArrayList<>()));
    }

    /** The collections any job recorded an effect in (a distinct over an indexed field). */
    List<String> effectCollections() {
        List<String> names = new ArrayList<>();
        for (BsonValue collection : retry.execute(name, null, "list effect collections",
                () -> jobs.distinct(EFFECTS + ".c", BsonValue.class).into(new ArrayList<>()))) {
            // read back: only a name an effect could have been recorded under is a collection to visit
            if (collection != null && collection.isString()
                    && Names.isCollectionName(collection.asString().getValue())) {
                names.add(collection.asString().getValue());
            }
        }
        return names;
    }

    /** The jobs of {@code ids} with their state, owner and token, from the primary. */
    List<Document> claimsOf(List<Object> ids) {
        return retry.execute(name, null, "read reserving jobs", () -> jobs.withReadPreference(ReadPreference.primary())
                .find(in("_id", ids)).projection(Projections.include(STATE, OWNER, TOKEN)).into(new ArrayList<>()));
    }

    // ---------------------------------------------------------------- reads by state

    /** The jobs {@code filter} matches, with {@code fields}, in {@code sort} order, after {@code skip}, at most
     * {@code limit}. */
    List<Document> find(Bson filter, Bson sort, int skip, int limit, String... fields) {
        return jobs.find(filter).projection(Projections.include(fields)).sort(sort).skip(skip).limit(limit)
                .into(new ArrayList<>());
    }

    /** The jobs {@code filter} matches, with {@code fields}: every one. */
    List<Document> findAll(Bson filter, String... fields) {
        return jobs.find(filter).projection(Projections.include(fields)).into(new ArrayList<>());
    }

    /** How many jobs were done after {@code since}, counted up to {@code cap}. */
    long countDoneSince(Date since, int cap) {
        return jobs.countDocuments(and(eq(STATE, JobState.DONE.stored()), gt(COMPLETED, since)),
                new CountOptions().limit(cap));
    }

    /** The jobs by state, from one pass. */
    StateSnapshot snapshot() {
        return StateSnapshot.of(jobs, STATE, CLAIMED);
    }

    /** The result of {@code pipeline} over the jobs. */
    List<Document> aggregate(List<Bson> pipeline) {
        return jobs.aggregate(pipeline).into(new ArrayList<>());
    }

    // ---------------------------------------------------------------- ordering keys' lines

    /**
     * Puts job {@code jobId}, recorded with line nonce {@code nonce}, at the end of key {@code key}'s line, on the key's
     * document, unless the document holds it already or is full ({@code shape}: a chunk's worth of entries, fewer on
     * a line that holds all the chunks it may), creating the key's document (line id {@code nonce}) if there is none.
     * Not retried: a duplicate-key error (the key's document was created by another writer, holds the entry already,
     * or is full) is the caller's to settle.
     *
     * A join does not count as a move ({@code movedAt}, set when it creates the document, at {@code now}): a line
     * whose head nothing moved on stays one recovery looks at, however many jobs join it.
     */
    void joinLine(String key, Object jobId, String nonce, Integer limit, LineShape shape, Date now) {
        Bson room = Filters.or(
                and(Filters.lt(JobSchema.CHUNKS, shape.maxChunks()),
                        exists(JobSchema.LINE + "." + (shape.chunk() - 1), false)),
                and(Filters.gte(JobSchema.CHUNKS, shape.maxChunks()),
                        exists(JobSchema.LINE + "." + (shape.lastChunk() - 1), false)));
        Bson join = Updates.combine(Updates.push(JobSchema.LINE, new Document("j", jobId).append("n", nonce)),
                Updates.setOnInsert(JobSchema.MOVED, now), Updates.setOnInsert(JobSchema.LINE_ID, nonce),
                Updates.setOnInsert(JobSchema.NEXT_CHUNK, 0), Updates.setOnInsert(JobSchema.HEAD_CHUNK, 0),
                Updates.setOnInsert(JobSchema.CHUNKS, 0));
        // an update, not a findAndModify: the real engine answers a findAndModify whose upsert meets the key's
        // document (full, or holding the entry) with InternalError, not a duplicate key (docs/servers.md)
        keys.updateOne(and(eq("_id", key), Filters.ne(JobSchema.LINE + ".n", nonce), room), limit == null ? join
                : Updates.combine(join, Updates.set(JobSchema.LIMIT, limit)), new UpdateOptions().upsert(true));
    }

    /** The jobs of {@code ids}, with their state and line nonce, from the primary. Not retried. */
    List<Document> linedJobs(List<Object> ids) {
        return jobs.withReadPreference(ReadPreference.primary()).find(in("_id", ids))
                .projection(Projections.include(STATE, JobSchema.LINE_NONCE, RUN_AT)).into(new ArrayList<>());
    }

    /** Key {@code key}'s document whole (its entries are at most a chunk's worth), from the primary. Not retried. */
    Document lineTail(String key) {
        return keys.withReadPreference(ReadPreference.primary()).find(eq("_id", key)).first();
    }

    /**
     * Key {@code key}'s document with the first {@code most} entries it holds only (a {@code $slice} projection), from
     * the primary: with its line's chunks, what moving a line on needs. Not retried.
     */
    Document lineHead(String key, int most) {
        // the fields named with the slice: a projection of a $slice alone returns every other field on MongoDB, and
        // only the sliced array on the embedded server
        return keys.withReadPreference(ReadPreference.primary()).find(eq("_id", key))
                .projection(Projections.fields(Projections.include(JobSchema.LIMIT, JobSchema.LINE_ID,
                        JobSchema.NEXT_CHUNK, JobSchema.HEAD_CHUNK, JobSchema.CHUNKS),
                        Projections.slice(JobSchema.LINE, most))).first();
    }

    /** The chunks of {@code ids} that exist, each with its first {@code most} entries only, from the primary. */
    List<Document> lineChunks(List<Document> ids, int most) {
        return keys.withReadPreference(ReadPreference.primary()).find(in("_id", ids))
                .projection(Projections.fields(Projections.include("_id"), Projections.slice(JobSchema.LINE, most)))
                .into(new ArrayList<>());
    }

    /**
     * Writes chunk {@code id} holding {@code entries}, noted written at {@code now} until it is in its line; whether
     * this call wrote it (false: a chunk of that id exists). Not retried: a lost reply is settled by the caller, which
     * reads the chunk.
     */
    boolean insertChunk(Document id, List<Document> entries, Date now) {
        try {
            keys.insertOne(new Document("_id", id).append(JobSchema.LINE, entries).append(JobSchema.MOVED, now));
            return true;
        } catch (MongoException e) {
            if (MongoErrors.isDuplicateKey(e)) {
                return false;
            }
            throw e;
        }
    }

    /**
     * Puts the chunk numbered {@code chunk} in key {@code key}'s line {@code lineId}, if it is still the line's next:
     * the entries of {@code nonces} (the chunk's) leave the key's document, and the line counts one more chunk.
     * Whether it did; a lost reply reads as not (the caller looks at the line again).
     */
    boolean rollLine(String key, Object lineId, int chunk, List<Object> nonces) {
        return retry.execute(name, key, "move a line's entries into a chunk", () -> keys.updateOne(and(eq("_id", key),
                eq(JobSchema.LINE_ID, lineId), eq(JobSchema.NEXT_CHUNK, chunk)), Updates.combine(Updates.pull(
                JobSchema.LINE, in("n", nonces)), Updates.inc(JobSchema.NEXT_CHUNK, 1),
                Updates.inc(JobSchema.CHUNKS, 1)))).getMatchedCount() == 1;
    }

    /** Notes that chunk {@code id} is in its line: recovery no longer looks at it. */
    void chunkInLine(Document id) {
        retry.run(name, id, "note chunk in line", () -> keys.updateOne(eq("_id", id), Updates.unset(JobSchema.MOVED)));
    }

    /**
     * Takes the chunk numbered {@code chunk}, emptied or gone, off the head of key {@code key}'s line {@code lineId},
     * if it is still its head.
     */
    void dropHeadChunk(String key, Object lineId, int chunk) {
        retry.run(name, key, "drop a line's emptied chunk", () -> keys.updateOne(and(eq("_id", key),
                eq(JobSchema.LINE_ID, lineId), eq(JobSchema.HEAD_CHUNK, chunk), Filters.gt(JobSchema.CHUNKS, 0)),
                Updates.combine(Updates.inc(JobSchema.HEAD_CHUNK, 1), Updates.inc(JobSchema.CHUNKS, -1),
                        Updates.currentDate(JobSchema.MOVED))));
    }

    /** Deletes chunk {@code id} if it holds no entry. */
    void deleteEmptyChunk(Document id) {
        retry.run(name, id, "delete empty chunk", () -> ConditionalUpdates.delete(keys, id,
                Filters.size(JobSchema.LINE, 0)));
    }

    /** Deletes chunk {@code id}, which no line reads: behind its line's head, or of a line since deleted. */
    void deleteChunk(Document id) {
        retry.run(name, id, "delete chunk no line reads", () -> ConditionalUpdates.delete(keys, id, null));
    }

    /**
     * Which of {@code nonces} line {@code key} holds entries of, on the key's document and in its chunks: reads that
     * return those entries alone (a {@code $filter} on the server, the nonces as literals: they are read back from
     * jobs, input again), however long the line. Not retried.
     */
    Set<String> lineHolding(String key, List<String> nonces) {
        Document filter = new Document("$filter", new Document("input", "$" + JobSchema.LINE).append("as", "e")
                .append("cond", new Document("$in", List.of("$$e.n", new Document("$literal", nonces)))));
        Document tail = keys.withReadPreference(ReadPreference.primary()).aggregate(List.of(
                Aggregates.match(eq("_id", key)),
                Aggregates.project(new Document(JobSchema.LINE, filter).append(JobSchema.LINE_ID, 1)
                        .append(JobSchema.HEAD_CHUNK, 1).append(JobSchema.NEXT_CHUNK, 1)))).first();
        Set<String> out = new HashSet<>();
        if (tail == null) {
            return out;
        }
        List<Document> held = new ArrayList<>(List.of(tail));
        List<Document> chunks = chunkIds(key, tail);
        if (!chunks.isEmpty()) {
            keys.withReadPreference(ReadPreference.primary()).aggregate(List.of(
                    Aggregates.match(in("_id", chunks)),
                    Aggregates.project(new Document(JobSchema.LINE, filter)))).into(held);
        }
        for (Document d : held) {
            for (Object entry : d.getList(JobSchema.LINE, Object.class, List.of())) {
                if (entry instanceof Document e && e.get("n") instanceof String n) {
                    out.add(n);
                }
            }
        }
        return out;
    }

    /**
     * The ids of the chunks line {@code key} holds, from its document {@code tail}, oldest first; none when the
     * document's numbers are not ones this queue wrote.
     */
    static List<Document> chunkIds(String key, Document tail) {
        if (!(tail.get(JobSchema.HEAD_CHUNK) instanceof Integer head)
                || !(tail.get(JobSchema.NEXT_CHUNK) instanceof Integer next) || tail.get(JobSchema.LINE_ID) == null) {
            return List.of();
        }
        List<Document> ids = new ArrayList<>();
        for (int c = head; c < next; c++) {
            ids.add(chunkId(key, tail.get(JobSchema.LINE_ID), c));
        }
        return ids;
    }

    /** The {@code _id} of chunk {@code number} of key {@code key}'s line {@code lineId}. */
    static Document chunkId(String key, Object lineId, int number) {
        return new Document(JobSchema.CHUNK_KEY, key).append(JobSchema.CHUNK_LINE, lineId)
                .append(JobSchema.CHUNK_NUMBER, number);
    }

    /**
     * Takes the entries of line nonces {@code nonces} out of document {@code id} of a line (a key's document, or a
     * chunk), wherever they are. Idempotent.
     */
    void leaveLine(Object id, List<Object> nonces) {
        Bson pull = Updates.pull(JobSchema.LINE, in("n", nonces));
        retry.run(name, id, "leave line", () -> keys.updateOne(eq("_id", id), id instanceof String
                ? Updates.combine(pull, Updates.currentDate(JobSchema.MOVED)) : pull));
    }

    /** Deletes key {@code key}'s document if its line is empty: no entry on it, no chunk. */
    void deleteEmptyLine(String key) {
        retry.run(name, key, "delete empty line", () -> ConditionalUpdates.delete(keys, key,
                and(Filters.size(JobSchema.LINE, 0), eq(JobSchema.CHUNKS, 0))));
    }

    /** Notes that recovery looked at key {@code key} (or a chunk), so that the next passes look at others first. */
    void lookedAtLine(Object key) {
        retry.run(name, key, "note line looked at", () -> keys.updateOne(eq("_id", key),
                Updates.currentDate(JobSchema.MOVED)));
    }

    /**
     * Keys nothing moved since {@code cutoff}, and chunks written before it and still not in their line, at most
     * {@code limit}, least recently moved first: their {@code _id}s.
     */
    List<Object> linesBefore(Date cutoff, int limit) {
        List<Object> out = new ArrayList<>();
        for (Document d : retry.execute(name, null, "find quiet lines", () -> keys.find(lte(JobSchema.MOVED, cutoff))
                .projection(Projections.include("_id")).sort(Sorts.ascending(JobSchema.MOVED)).limit(limit)
                .into(new ArrayList<>()))) {
            out.add(d.get("_id"));
        }
        return out;
    }

    /**
     * Lets waiting job {@code jobId} run, if it still waits under order nonce {@code nonce}: claimable from
     * {@code runAt}, its run-at time as read (nothing moves the run-at time of a job awaiting its key's turn).
     */
    void endWait(Object jobId, Object nonce, Object runAt) {
        retry.run(name, jobId, "release awaiting job", () -> jobs.updateOne(and(eq("_id", jobId),
                eq(STATE, JobState.AWAITING.stored()), eq(JobSchema.LINE_NONCE, nonce)),
                Updates.combine(Updates.set(STATE, JobState.TODO.stored()), Updates.set(CLAIM_AT, runAt),
                        Updates.currentDate(JobSchema.LAST_MODIFIED))));
    }

    // ---------------------------------------------------------------- schedules of recurring jobs

    /** The schedules' collection, a business collection to the outbox: each firing is an outbox write on it. */
    MongoCollection<Document> schedules() {
        return schedules;
    }

    /** Schedule {@code name} from the primary; {@code null} if none. Not retried. */
    Document schedule(String name) {
        return schedules.withReadPreference(ReadPreference.primary()).find(eq("_id", name)).first();
    }

    /**
     * Writes the definition of schedule {@code name} with {@code update} if its revision is still {@code revision}
     * (absent, when {@code null}: then it inserts it); whether it wrote. Not retried: a lost reply is settled by the
     * caller, which reads the schedule again.
     */
    boolean defineSchedule(String name, Object revision, Bson update) {
        verifyPlacements();
        try {
            UpdateResult r = schedules.updateOne(and(eq("_id", name), revision == null ? exists(REVISION, false)
                    : eq(REVISION, revision)), update, new UpdateOptions().upsert(revision == null));
            return r.getMatchedCount() == 1 || r.getUpsertedId() != null;
        } catch (com.mongodb.MongoWriteException e) {
            if (e.getError().getCategory() == com.mongodb.ErrorCategory.DUPLICATE_KEY) {
                return false;   // another definition was inserted first
            }
            throw e;
        }
    }

    /** Moves schedule {@code name} by {@code update} if its revision and next occurrence are still those read. */
    boolean moveSchedule(String what, String name, Object revision, Date next, Bson update) {
        return retry.execute(this.name, name, what, () -> schedules.updateOne(and(eq("_id", name),
                eq(REVISION, revision), eq(NEXT, next)), update).getModifiedCount()) == 1;
    }

    /** Schedules due by {@code now}, at most {@code limit}, oldest first, by the {@code due_schedules} index. */
    List<Document> dueSchedules(Date now, int limit) {
        return retry.execute(name, null, "find due schedules", () -> schedules.find(lte(NEXT, now))
                .sort(Sorts.ascending(NEXT)).limit(limit).into(new ArrayList<>()));
    }

    /** Schedules after {@code skip}, at most {@code limit}, by name. */
    List<Document> schedules(int skip, int limit) {
        return schedules.find(exists(REMOVED, false)).projection(Projections.exclude(OUTBOX,
                        JobSchema.OUTBOX_RESERVED, JobSchema.OUTBOX_WRITTEN)).sort(Sorts.ascending("_id")).skip(skip)
                .limit(limit).into(new ArrayList<>());
    }

    /** Removed schedules, at most {@code limit}, by the {@code removed_schedules} index. */
    List<Object> removedSchedules(int limit) {
        return retry.execute(name, null, "find removed schedules", () -> schedules.find(exists(REMOVED, true))
                .projection(Projections.include("_id")).limit(limit).map(d -> d.get("_id")).into(new ArrayList<>()));
    }

    /**
     * Deletes removed schedule {@code id} if nothing is in its outbox and no firing holds a reservation on it (such a
     * firing is refused by the revision, and gives it back); whether it deleted.
     */
    boolean deleteRemovedSchedule(Object id) {
        return retry.execute(name, id, "delete removed schedule", () -> ConditionalUpdates.delete(schedules, id,
                and(exists(REMOVED, true), exists(OUTBOX + ".0", false), exists(JobSchema.OUTBOX_RESERVED + ".0",
                        false), exists(JobSchema.OUTBOX_WRITTEN + ".0", false)))) == 1;
    }

    // ---------------------------------------------------------------- operators' writes

    /** Moves job {@code id} by {@code transition}; what the compare-and-set found. */
    GuardedResult transition(Object id, String what, Transition transition) {
        return retry.execute(name, id, what, () -> ConditionalUpdates.transition(jobs, id, transition));
    }

    /**
     * Sets job {@code id}'s run-at time to {@code at} if it is due later or failed and due again (a worker may claim
     * it); whether it was.
     */
    boolean moveRunAt(Object id, Date at) {
        Bson update = Updates.combine(Updates.set(RUN_AT, at), Updates.set(CLAIM_AT, at),
                Updates.currentDate(JobSchema.LAST_MODIFIED));
        return retry.execute(name, id, "reschedule", () -> jobs.updateOne(and(eq("_id", id),
                in(STATE, JobSchema.DUE_STATES)), update).getMatchedCount() == 1);
    }

    /**
     * Makes waiting job {@code id} claimable from {@code runAt}, if it still waits (due later, or failed and due again)
     * and is still due at {@code runAt}: for a job whose run-at time was written without its claim time. Whether it
     * changed.
     */
    boolean makeClaimable(Object id, Date runAt) {
        return retry.execute(name, id, "make job claimable", () -> jobs.updateOne(and(eq("_id", id),
                in(STATE, JobSchema.DUE_STATES), eq(RUN_AT, runAt)), Updates.set(CLAIM_AT, runAt))
                .getModifiedCount() == 1);
    }

    /** {@code update} on every job {@code filter} matches (the filter is the guard); how many changed. */
    long updateAll(String what, Bson filter, Bson update) {
        return retry.execute(name, null, what, () -> jobs.updateMany(filter, update).getModifiedCount());
    }

    /** Deletes every job {@code filter} matches; how many. */
    long deleteAll(String what, Bson filter) {
        return retry.execute(name, null, what, () -> jobs.deleteMany(filter).getDeletedCount());
    }

    /** Compacts the held jobs {@code filter} matches down to what a late retry reads; how many. */
    long compact(String what, Bson filter, List<String> away) {
        return retry.execute(name, null, what, () -> RecordReleases.compact(jobs, filter,
                List.of(RecordReleases.FIELD, OUTBOX_NONCE), away));
    }
}
