package dev.consistencykit.jobqueue.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.in;
import static dev.consistencykit.jobqueue.internal.JobSchema.ATTEMPTS;
import static dev.consistencykit.jobqueue.internal.JobSchema.DEDUPE;
import static dev.consistencykit.jobqueue.internal.JobSchema.ENQUEUED;
import static dev.consistencykit.jobqueue.internal.JobSchema.LAST_MODIFIED;
import static dev.consistencykit.jobqueue.internal.JobSchema.MAX_ATTEMPTS;
import static dev.consistencykit.jobqueue.internal.JobSchema.PAYLOAD;
import static dev.consistencykit.jobqueue.internal.JobSchema.PRIORITY;
import static dev.consistencykit.jobqueue.internal.JobSchema.RUN_AT;
import static dev.consistencykit.jobqueue.internal.JobSchema.STATE;
import static dev.consistencykit.jobqueue.internal.JobSchema.TOKEN;
import static dev.consistencykit.jobqueue.internal.JobSchema.TYPE;

import java.util.Date;
import java.util.Objects;
import java.util.function.Supplier;

import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.MongoException;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.MongoErrors;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.jobqueue.JobState;

/**
 * Validating a job request and recording the job in one write.
 */
public final class JobRecording {

    private final JobQueueConfig config;
    private final JobStore store;
    private final JobHooks hooks;
    private final JobCounters counters;
    private final ServerClock clock;
    private final Supplier<String> ownerIds;

    /** The recording of jobs, through the store; a job's due time runs on {@code clock}. */
    JobRecording(JobQueueConfig config, JobStore store, JobHooks hooks, JobCounters counters, ServerClock clock,
                 Supplier<String> ownerIds) {
        this.config = config;
        this.store = store;
        this.hooks = hooks;
        this.counters = counters;
        this.clock = clock;
        this.ownerIds = ownerIds;
    }

    // ---------------------------------------------------------------- validation and recording

    /** Validates {@code job}; nothing is written. */
    public EncodedJob encode(JobRequest job) {
        Object id = Ids.operationId(config.name(), "job id", job.id().value());
        String type = job.type();
        if (type == null || type.isBlank()) {
            throw new InvalidInputException(config.name(), "type", "type must not be "
                    + (type == null ? "null" : "blank, was " + Values.show(type)));
        }
        Values.plainValue(config.name(), "type", new BsonString(type));
        // stored as encoded and checked here, with the database's own codecs: a UUID or a POJO the caller's client
        // stores is accepted, an operator hidden in a driver value is not, and a later change to the caller's
        // document does not reach the queue
        BsonDocument payload = Values.plainDocument(config.name(), "payload",
                job.payload() == null ? new Document() : job.payload(), store.codecs());
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
                .append(STATE, JobState.TODO.stored());
        if (job.dedupeKey().isPresent()) {
            String key = job.dedupeKey().get();
            if (key.isBlank()) {
                throw new InvalidInputException(config.name(), "dedupeKey", "dedupeKey must not be blank");
            }
            Ids.operationId(config.name(), "dedupeKey", key);   // kept in a unique index: an id's rules and limit
            fields.append(DEDUPE, key);
        }
        if (job.orderingKey().isPresent() && job.concurrency().isPresent()) {
            throw new InvalidInputException(config.name(), "orderingKey", "a job has an ordering key or a concurrency"
                    + " key, not both (an ordering key is a limit of 1 that a dead job blocks)");
        }
        if (job.orderingKey().isPresent()) {
            fields.append(JobSchema.LINE_KEY, JobSchema.ORDER_LINE + lineKey("orderingKey", job.orderingKey().get()))
                    .append(STATE, JobState.AWAITING.stored());
        }
        if (job.concurrency().isPresent()) {
            fields.append(JobSchema.LINE_KEY, JobSchema.LIMIT_LINE + lineKey("concurrencyKey",
                    job.concurrency().get().key())).append(JobSchema.LINE_LIMIT, job.concurrency().get().limit())
                    .append(STATE, JobState.AWAITING.stored());
        }
        return new EncodedJob(id, fields, job.delay());
    }

    /** An ordering or concurrency key: the id of its line, with an id's rules and limit. */
    private String lineKey(String field, String key) {
        if (key.isBlank()) {
            throw new InvalidInputException(config.name(), field, field + " must not be blank");
        }
        Ids.operationId(config.name(), field, JobSchema.ORDER_LINE + key);
        return key;
    }

    Bson recordUpdate(EncodedJob job, String nonce) {
        Date runAt = Date.from(clock.now().plus(job.delay()));
        Document fields = new Document(job.fields()).append(RUN_AT, runAt).append(RecordReleases.FIELD, nonce);
        if (JobSchema.DUE_STATES.contains(fields.get(STATE))) {
            fields.append(JobSchema.CLAIM_AT, runAt);
        }
        if (job.fields().containsKey(JobSchema.LINE_KEY)) {
            fields.append(JobSchema.LINE_NONCE, nonce);
        }
        return Updates.combine(Updates.setOnInsert(fields), Updates.currentDate(ENQUEUED),
                Updates.currentDate(LAST_MODIFIED));
    }

    /**
     * Records {@code job} (one write); a repeat with the same content returns the existing job's id. The record
     * carries this call's nonce until {@link RecordReleases} releases it, so that a retry of the write sent after the
     * job ran and a pruner removed it finds it kept rather than inserts it again.
     */
    public OperationId enqueue(EncodedJob job) {
        String nonce = ownerIds.get();
        Document recorded = record(job, nonce);
        if (nonce.equals(recorded.getString(RecordReleases.FIELD))) {
            store.recorded(recorded.get("_id"), nonce);
        }
        return new OperationId(recorded.get("_id"));
    }

    /**
     * Writes {@code job}'s record carrying {@code nonce}, or finds the same job already recorded under its id or
     * dedupe key.
     *
     * @return the record's {@code _id} and the nonce it carries (this one when this call wrote it)
     */
    Document record(EncodedJob job, String nonce) {
        requireSetup(job);
        Document recorded = config.retryPolicy().execute(config.name(), job.id(), "enqueue", () -> {
            try {
                if (!store.insertJob(job.id(), recordUpdate(job, nonce))) {
                    throw new ConsistencyException(config.name(), job.id(), "the jobs collection holds a document"
                            + " without a state under this id");
                }
                counters.enqueued.increment();
                return new Document("_id", job.id()).append(RecordReleases.FIELD, nonce)
                        .append(JobSchema.LINE_NONCE, nonce);
            } catch (MongoException e) {
                if (!MongoErrors.isDuplicateKey(e)) {
                    throw e;
                }
                Document found = existing(job);
                return new Document("_id", found.get("_id")).append(RecordReleases.FIELD,
                        found.get(RecordReleases.FIELD)).append(JobSchema.LINE_NONCE,
                        found.get(JobSchema.LINE_NONCE));
            }
        });
        // a job with a key was recorded waiting: it runs once its turn in its key's line comes
        hooks.recorded(recorded.get("_id"), job.fields(), recorded.get(JobSchema.LINE_NONCE));
        return recorded;
    }

    /**
     * Refuses, before the first write, a queue whose collections are sharded in a way its writes cannot live with;
     * and, since only the unique index makes a second job with a dedupe key collide, a job with one without it.
     */
    void requireSetup(EncodedJob job) {
        store.verifyPlacements();
        if (job.fields().containsKey(DEDUPE)) {
            store.verifyIndexes();
        }
    }

    /** The job already recorded under {@code job}'s id or dedupe key, if it is the same job; otherwise a conflict. */
    Document existing(EncodedJob job) {
        Document byId = store.readPrimary(job.id());
        String key = job.fields().getString(DEDUPE);
        Document found = byId != null ? byId : key == null ? null : store.byDedupeKey(key);
        if (found == null) {
            throw new ConsistencyException(config.name(), job.id(), "enqueue hit a duplicate key but no job holds"
                    + " its id or dedupe key");
        }
        if (!sameJob(found, job)) {
            String what = byId != null ? "job id " + job.id() : "dedupe key '" + key + "'";
            throw new IdempotencyConflictException(config.name(), job.id(), what + " is already used by a job with"
                    + " another type or payload (" + found.get("_id") + "); nothing was written");
        }
        // found rather than written (perhaps by this call's attempt whose acknowledgement failed): confirm the
        // write concern before reporting it enqueued
        store.confirm(found.get("_id"), "enqueue");
        return found;
    }

    /**
     * Whether {@code found}, a stored job, is {@code job}: same type, payload and dedupe key. A job compacted past its
     * retention ({@link RecordReleases#compact}) has no payload left: its type and dedupe key decide.
     */
    boolean sameJob(Document found, EncodedJob job) {
        return Objects.equals(found.getString(TYPE), job.fields().getString(TYPE))
                && (RecordReleases.isCompacted(found) || samePayload(found.get(PAYLOAD), job.fields().get(PAYLOAD)))
                && Objects.equals(found.getString(DEDUPE), job.fields().getString(DEDUPE))
                && Objects.equals(found.get(JobSchema.LINE_KEY), job.fields().get(JobSchema.LINE_KEY));
    }

    /** Equal as stored: both sides compared in BSON, as the database's codecs encode them. */
    boolean samePayload(Object stored, Object requested) {
        if (stored == null || requested == null) {
            return stored == requested;
        }
        try {
            return Values.encode(config.name(), "payload", stored, store.codecs())
                    .equals(Values.encode(config.name(), "payload", requested, store.codecs()));
        } catch (InvalidInputException e) {
            return false;
        }
    }
}
