package dev.consistencykit.jobqueue.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.in;
import static dev.consistencykit.jobqueue.internal.JobFields.DEDUPE;
import static dev.consistencykit.jobqueue.internal.JobFields.HELD;
import static dev.consistencykit.jobqueue.internal.JobFields.LOG;
import static dev.consistencykit.jobqueue.internal.JobFields.MAX_ATTEMPTS;
import static dev.consistencykit.jobqueue.internal.JobFields.OUTBOX;
import static dev.consistencykit.jobqueue.internal.JobFields.OUTBOX_MARKER;
import static dev.consistencykit.jobqueue.internal.JobFields.OUTBOX_NONCE;
import static dev.consistencykit.jobqueue.internal.JobFields.PAYLOAD;
import static dev.consistencykit.jobqueue.internal.JobFields.PRIORITY;
import static dev.consistencykit.jobqueue.internal.JobFields.TYPE;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.MongoException;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.EffectMarker;
import dev.consistencykit.core.GuardedResult;
import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.Ids;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.MarkerWrite;
import dev.consistencykit.core.OnceEffects;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OutcomeUnknownException;
import dev.consistencykit.core.RecordReleases;
import dev.consistencykit.core.UpdateOutcome;
import dev.consistencykit.core.Values;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.jobqueue.internal.JobEngine.Encoded;

/**
 * Enqueueing atomically with the application's own write (the outbox) and relaying outbox entries.
 */
final class JobOutbox {

    private final JobFields fields;
    private final JobQueueConfig config;
    private final JobRecording recording;

    /** The outbox, over the shared fields and the recording of jobs (a relayed entry is recorded as a job). */
    JobOutbox(JobFields fields, JobRecording recording) {
        this.fields = fields;
        this.config = fields.config;
        this.recording = recording;
    }

    // ---------------------------------------------------------------- enqueue with a business write

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
        recording.requireDedupeIndex(job);
        String nonce = fields.ownerIds.get();
        Object jobId = job.id();
        String dedupeKey = job.fields().getString(DEDUPE);
        if (dedupeKey != null) {
            // a key another job holds with other content is a conflict: refused before the business write, not
            // found by the relay after it
            Document holder = config.retryPolicy().execute(config.name(), jobId, "read dedupe key",
                    () -> fields.jobs.withReadPreference(ReadPreference.primary()).find(eq(DEDUPE, dedupeKey)).first());
            if (holder != null && !recording.sameJob(holder, job)) {
                throw new IdempotencyConflictException(config.name(), jobId, "dedupe key '" + dedupeKey + "' is"
                        + " already used by a job with another type or payload (" + holder.get("_id") + "); nothing"
                        + " was written");
            }
        }
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
                return Optional.of(new OperationId(queuedId(job)));
            }
            case MISSING -> {
                return Optional.empty();
            }
            default -> {
                Document current = written.document().orElse(null);
                if (current != null && OUTBOX_MARKER.evidence(current, jobId, nonce) == EffectMarker.Evidence
                        .RESERVED) {
                    // the business filter did not match: give the reservation back
                    config.retryPolicy().run(config.name(), jobId, "release outbox reservation",
                            () -> OnceEffects.release(business, OUTBOX_MARKER, jobId, nonce, List.of(documentId)));
                }
                return Optional.empty();
            }
        }
    }

    /** The id under which the queue holds {@code job}: its own, or, deduplicated, the job that holds its key. */
    Object queuedId(Encoded job) {
        String key = job.fields().getString(DEDUPE);
        if (key == null) {
            return job.id();
        }
        Document holder = config.retryPolicy().execute(config.name(), job.id(), "read dedupe key",
                () -> fields.jobs.withReadPreference(ReadPreference.primary()).find(eq(DEDUPE, key))
                        .projection(Projections.include("_id")).first());
        return holder == null ? job.id() : holder.get("_id");
    }

    /**
     * A retried business write was refused: an earlier attempt may have applied and a relayer moved the job on since.
     * Applied if the job the relay enqueued carries this call's nonce; still refused if this call's reservation is
     * there; otherwise unknown.
     */
    GuardedResult retried(GuardedResult refused, Object jobId, String nonce) {
        Document current = refused.document().orElse(null);
        if (current != null && OUTBOX_MARKER.evidence(current, jobId, nonce) != EffectMarker.Evidence.NONE) {
            return refused;
        }
        Document queued = fields.jobs.withReadPreference(ReadPreference.primary())
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

    /**
     * Relays each job in {@code doc}'s outbox. A relayer may have read the outbox long ago: another may since have
     * relayed the entry, the job run, and a pruner removed it. So the job is recorded <em>held</em> (no worker claims
     * it), the entry is then read again: gone, and the job this relayer just recorded is a resurrection, deleted
     * unclaimed; still there, and the job, whoever recorded it, is the entry's one: it is released to the workers,
     * then the entry is settled off the document. The record stays unprunable ({@link RecordReleases}) until the
     * relayer that wrote it has settled the entry.
     */
    int relayDocument(MongoCollection<Document> business, Document doc) {
        int moved = 0;
        for (Object raw : Values.arrayOf(doc, OUTBOX)) {
            Encoded job = storedEntry(doc.get("_id"), raw);
            if (job == null) {
                continue;
            }
            Object jobId = job.id();
            String nonce = fields.ownerIds.get();
            Document recorded = null;
            try {
                recorded = recording.record(new Encoded(jobId, new Document(job.fields()).append(HELD, nonce), job
                        .delay()),
                        nonce);
            } catch (IdempotencyConflictException conflict) {
                // its dedupe key went to another job with other content after the business write: that job is the
                // key's one; this entry is settled off the document rather than block the relay for ever
                LOG.warn("[{}] outboxed job {} on document {} is not queued: {}", config.name(), jobId,
                        doc.get("_id"), conflict.getMessage());
            }
            boolean mine = recorded != null && nonce.equals(recorded.getString(RecordReleases.FIELD));
            if (recorded != null && !stillOutboxed(business, doc.get("_id"), jobId)) {
                // relayed and settled by another since this relayer read the outbox: what it recorded now may be a
                // job that already ran and was pruned; it never ran, being held, and goes
                long deleted = !mine ? 0 : config.retryPolicy().execute(config.name(), jobId, "withdraw relayed job",
                        () -> fields.jobs.deleteOne(and(eq("_id", jobId), eq(RecordReleases.FIELD, nonce), eq(HELD,
                                nonce)))
                                .getDeletedCount());
                if (mine && deleted == 0) {
                    fields.releases.written(jobId,
                            nonce);   // released to the workers by another relayer: the entry's job
                }
                continue;
            }
            if (recorded != null) {
                Object queued = recorded.get("_id");
                config.retryPolicy().run(config.name(), jobId, "release relayed job", () -> fields.jobs.updateOne(
                        and(eq("_id", queued), exists(HELD, true)), Updates.unset(HELD)));
            }
            Bson pullEntry = Updates.pull(OUTBOX, new Document("_id", jobId));
            config.retryPolicy().execute(config.name(), jobId, "clear outbox",
                    () -> OnceEffects.settle(business, OUTBOX_MARKER, jobId,
                            // the last job written there: its entry is the outbox's only one, and the array goes
                            List.of(new MarkerWrite(doc.get("_id"), null, pullEntry, Updates.unset(OUTBOX))))
                            .get(doc.get("_id")));
            if (mine) {
                fields.releases.written(jobId, nonce);
            }
            fields.relayed.increment();
            moved++;
        }
        return moved;
    }

    /** Whether {@code documentId}'s outbox still holds job {@code jobId}: read from the primary. */
    boolean stillOutboxed(MongoCollection<Document> business, Object documentId, Object jobId) {
        return config.retryPolicy().execute(config.name(), jobId, "read outbox entry", () -> business
                .withReadPreference(ReadPreference.primary()).find(and(eq("_id", documentId),
                        eq(OUTBOX + "._id", jobId))).projection(Projections.include("_id")).first()) != null;
    }

    static boolean carries(Document doc, Object jobId) {
        for (Object e : Values.arrayOf(doc, OUTBOX)) {
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
    Encoded storedEntry(Object documentId, Object raw) {
        try {
            if (!(raw instanceof Document entry) || !(entry.get("job") instanceof Document fields)) {
                throw new InvalidInputException(config.name(), OUTBOX, "an outbox entry must be {_id, job: {...}}");
            }
            Object jobId = Ids.operationId(config.name(), OUTBOX + "._id", entry.get("_id"));
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
            Encoded encoded = recording.encode(request);
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
}
