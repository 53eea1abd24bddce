package dev.consistencykit.jobqueue.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.in;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.ReadPreference;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Projections;

import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.ConditionalUpdates;
import dev.consistencykit.core.spi.EffectMarker;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.LeaseFields;
import dev.consistencykit.core.spi.Listeners;
import dev.consistencykit.core.spi.OnceEffects;
import dev.consistencykit.core.spi.ReadSettings;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.core.spi.RequiredIndexes;
import dev.consistencykit.core.spi.Transition;
import dev.consistencykit.jobqueue.JobHandler;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobQueueListener;
import dev.consistencykit.jobqueue.JobState;

/**
 * The queue's stored fields, collection, counters and shared helpers: what every part of the {@link JobEngine} uses.
 */
final class JobFields {

    static final Logger LOG = LoggerFactory.getLogger(JobEngine.class);

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
    /**
     * On a job relayed from an outbox: the nonce of the outbox call ({@code enqueueWith}, {@code insertWith},
     * {@code upsertWith}) that wrote it, kept until that call releases it ({@link #outboxHolds}): what a retry of the
     * call, however late, finds after the document no longer shows the entry.
     */
    static final String OUTBOX_NONCE = "outboxNonce";
    /** On a job a relayer recorded and has not yet found still outboxed: the relayer's nonce; no worker claims it. */
    static final String HELD = "heldBy";
    /**
     * Beside {@link #HELD}: where the relayer found the job, {@code {c: collection, d: document id}}, so that recovery
     * can finish what a relayer that died holding it left: release it if the outbox still holds its entry, withdraw it
     * if not.
     */
    static final String HELD_FROM = "heldFrom";

    static final LeaseFields LEASE_FIELDS = new LeaseFields(OWNER, LEASE, TOKEN);
    static final EffectMarker EFFECT_MARKER = EffectMarker.of(RESERVED_JOBS, APPLIED_JOBS);
    static final EffectMarker OUTBOX_MARKER = EffectMarker.of(OUTBOX_RESERVED, OUTBOX_WRITTEN);

    /** The fields this queue keeps on business documents: no caller's update may touch them. */
    public static final Set<String> EFFECT_FIELDS = Set.of(RESERVED_JOBS, APPLIED_JOBS, OUTBOX, OUTBOX_RESERVED,
            OUTBOX_WRITTEN);
    static final List<String> DUE_STATES = List.of(JobState.TODO.stored(), JobState.FAILED.stored());

    final JobQueueConfig config;
    final MongoDatabase database;
    final MongoCollection<Document> jobs;
    final ServerClock clock;
    final JobQueueListener listener;
    final Supplier<String> ownerIds;
    final Map<String, JobHandler> handlers;
    final Map<String, MongoCollection<Document>> collections = new ConcurrentHashMap<>();
    /** The unique dedupe index: what makes two jobs with one dedupe key collide, checked before such a write. */
    final RequiredIndexes requiredIndexes;
    /** Jobs this instance recorded, to release so that pruning may remove them once done. */
    final RecordReleases releases;
    /** Jobs relayed from outbox calls of this instance, to release once those calls will not write again. */
    final RecordReleases outboxHolds;

    final LongAdder enqueued = new LongAdder();
    final LongAdder done = new LongAdder();
    final LongAdder failed = new LongAdder();
    final LongAdder dead = new LongAdder();
    final LongAdder requeued = new LongAdder();
    final LongAdder leaseLost = new LongAdder();
    final LongAdder relayed = new LongAdder();
    final LongAdder pruned = new LongAdder();

    /**
     * @param config   validated settings
     * @param database the application's database
     * @param clock    server time
     * @param listener hooks
     * @param ownerIds unique worker names
     * @param handlers handler per job type
     */
    JobFields(JobQueueConfig config, MongoDatabase database, ServerClock clock, JobQueueListener listener,
                     Supplier<String> ownerIds, Map<String, JobHandler> handlers) {
        database = ReadSettings.ownReads(database);
        this.config = config;
        this.database = database;
        this.jobs = database.getCollection(config.collection());
        this.releases = new RecordReleases(config.name(), jobs, config.retryPolicy());
        this.outboxHolds = new RecordReleases(config.name(), jobs, config.retryPolicy(), OUTBOX_NONCE);
        this.requiredIndexes = new RequiredIndexes(config.name(), List.of(new RequiredIndexes.Unique(jobs, "dedupe",
                List.of(DEDUPE), true, null)));
        this.clock = clock;
        this.listener = listener;
        this.ownerIds = ownerIds;
        this.handlers = Map.copyOf(handlers);
    }

    /** The application's listener. */
    public JobQueueListener listener() {
        return listener;
    }

    /** The fresh owner name for one worker. */
    public String newOwner() {
        return ownerIds.get();
    }

    void notify(Runnable call) {
        Listeners.call(config.name(), call);
    }

    /**
     * Releases the reservations on documents that no live claim holds: an earlier claim's, or a late one a paused
     * worker sent and died before releasing. Releasing a reservation is always safe: it is never applied after.
     *
     * @return reservations released
     */
    int releaseAbandoned() {
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
                    .forEach(d -> byId.put(Ids.idKey(d.get("_id")), d)));
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

    /** The collections any job recorded an effect in (a distinct over an indexed field). */
    List<String> effectCollections() {
        List<String> names = new ArrayList<>();
        for (String name : config.retryPolicy().execute(config.name(), null, "list effect collections",
                () -> jobs.distinct(EFFECTS + ".c", String.class).into(new ArrayList<>()))) {
            if (name != null) {
                names.add(name);
            }
        }
        return names;
    }
}
