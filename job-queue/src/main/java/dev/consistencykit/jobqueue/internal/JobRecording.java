package dev.consistencykit.jobqueue.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.in;
import static dev.consistencykit.jobqueue.internal.JobFields.ATTEMPTS;
import static dev.consistencykit.jobqueue.internal.JobFields.DEDUPE;
import static dev.consistencykit.jobqueue.internal.JobFields.ENQUEUED;
import static dev.consistencykit.jobqueue.internal.JobFields.LAST_MODIFIED;
import static dev.consistencykit.jobqueue.internal.JobFields.MAX_ATTEMPTS;
import static dev.consistencykit.jobqueue.internal.JobFields.PAYLOAD;
import static dev.consistencykit.jobqueue.internal.JobFields.PRIORITY;
import static dev.consistencykit.jobqueue.internal.JobFields.RUN_AT;
import static dev.consistencykit.jobqueue.internal.JobFields.STATE;
import static dev.consistencykit.jobqueue.internal.JobFields.TOKEN;
import static dev.consistencykit.jobqueue.internal.JobFields.TYPE;

import java.util.Date;
import java.util.Objects;

import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.MongoException;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.result.UpdateResult;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.MongoErrors;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.core.spi.WriteConcerns;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.jobqueue.JobState;
import dev.consistencykit.jobqueue.internal.JobEngine.Encoded;

/**
 * Validating a job request and recording the job in one write.
 */
final class JobRecording {

    private final JobFields fields;
    private final JobQueueConfig config;

    /** The recording of jobs, over the shared fields. */
    JobRecording(JobFields fields) {
        this.fields = fields;
        this.config = fields.config;
    }

    // ---------------------------------------------------------------- validation and recording

    /** Validates {@code job}; nothing is written. */
    public Encoded encode(JobRequest job) {
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
                job.payload() == null ? new Document() : job.payload(), fields.jobs.getCodecRegistry());
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
        return new Encoded(id, fields, job.delay());
    }

    Bson recordUpdate(Encoded job, String nonce) {
        Document fields = new Document(job.fields()).append(RUN_AT, Date.from(this.fields.clock.now().plus(job
                .delay())))
                .append(RecordReleases.FIELD, nonce);
        return Updates.combine(Updates.setOnInsert(fields), Updates.currentDate(ENQUEUED),
                Updates.currentDate(LAST_MODIFIED));
    }

    /**
     * Records {@code job} (one write); a repeat with the same content returns the existing job's id. The record
     * carries this call's nonce until {@link RecordReleases} releases it, so that a retry of the write sent after the
     * job ran and a pruner removed it finds it kept rather than inserts it again.
     */
    public OperationId enqueue(Encoded job) {
        String nonce = fields.ownerIds.get();
        Document recorded = record(job, nonce);
        if (nonce.equals(recorded.getString(RecordReleases.FIELD))) {
            fields.releases.written(recorded.get("_id"), nonce);
        }
        return new OperationId(recorded.get("_id"));
    }

    /**
     * Writes {@code job}'s record carrying {@code nonce}, or finds the same job already recorded under its id or
     * dedupe key.
     *
     * @return the record's {@code _id} and the nonce it carries (this one when this call wrote it)
     */
    Document record(Encoded job, String nonce) {
        requireDedupeIndex(job);
        return config.retryPolicy().execute(config.name(), job.id(), "enqueue", () -> {
            try {
                UpdateResult r = fields.jobs.updateOne(and(eq("_id", job.id()), exists(STATE, false)),
                        recordUpdate(job, nonce), new UpdateOptions().upsert(true));
                if (r.getUpsertedId() == null) {
                    throw new ConsistencyException(config.name(), job.id(), "the jobs collection holds a document"
                            + " without a state under this id");
                }
                fields.enqueued.increment();
                return new Document("_id", job.id()).append(RecordReleases.FIELD, nonce);
            } catch (MongoException e) {
                if (!MongoErrors.isDuplicateKey(e)) {
                    throw e;
                }
                Document found = existing(job);
                return new Document("_id", found.get("_id")).append(RecordReleases.FIELD,
                        found.get(RecordReleases.FIELD));
            }
        });
    }

    /** Only the unique index makes a second job with a dedupe key collide: refuse to write one without it. */
    void requireDedupeIndex(Encoded job) {
        if (job.fields().containsKey(DEDUPE)) {
            fields.requiredIndexes.verify();
        }
    }

    /** The job already recorded under {@code job}'s id or dedupe key, if it is the same job; otherwise a conflict. */
    Document existing(Encoded job) {
        MongoCollection<Document> primary = fields.jobs.withReadPreference(ReadPreference.primary());
        Document byId = primary.find(eq("_id", job.id())).first();
        String key = job.fields().getString(DEDUPE);
        Document found = byId != null ? byId : key == null ? null : primary.find(eq(DEDUPE, key)).first();
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
        WriteConcerns.confirm(fields.jobs, found.get("_id"), config.name(), "enqueue");
        return found;
    }

    /**
     * Whether {@code found}, a stored job, is {@code job}: same type, payload and dedupe key. A job compacted past its
     * retention ({@link RecordReleases#compact}) has no payload left: its type and dedupe key decide.
     */
    boolean sameJob(Document found, Encoded job) {
        return Objects.equals(found.getString(TYPE), job.fields().getString(TYPE))
                && (RecordReleases.isCompacted(found) || samePayload(found.get(PAYLOAD), job.fields().get(PAYLOAD)))
                && Objects.equals(found.getString(DEDUPE), job.fields().getString(DEDUPE));
    }

    /** Equal as stored: both sides compared in BSON, as the database's codecs encode them. */
    boolean samePayload(Object stored, Object requested) {
        if (stored == null || requested == null) {
            return stored == requested;
        }
        try {
            return Values.encode(config.name(), "payload", stored, fields.jobs.getCodecRegistry())
                    .equals(Values.encode(config.name(), "payload", requested, fields.jobs.getCodecRegistry()));
        } catch (InvalidInputException e) {
            return false;
        }
    }
}
