package dev.consistencykit.jobqueue.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.nin;
import static dev.consistencykit.jobqueue.internal.JobSchema.DEDUPE;
import static dev.consistencykit.jobqueue.internal.JobSchema.HELD;
import static dev.consistencykit.jobqueue.internal.JobSchema.HELD_FROM;
import static dev.consistencykit.jobqueue.internal.JobSchema.MAX_ATTEMPTS;
import static dev.consistencykit.jobqueue.internal.JobSchema.OUTBOX;
import static dev.consistencykit.jobqueue.internal.JobSchema.OUTBOX_MARKER;
import static dev.consistencykit.jobqueue.internal.JobSchema.OUTBOX_NONCE;
import static dev.consistencykit.jobqueue.internal.JobSchema.OUTBOX_WRITTEN;
import static dev.consistencykit.jobqueue.internal.JobSchema.PAYLOAD;
import static dev.consistencykit.jobqueue.internal.JobSchema.PRIORITY;
import static dev.consistencykit.jobqueue.internal.JobSchema.TYPE;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.MongoException;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.LeaseLostException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OutcomeUnknownException;
import dev.consistencykit.core.spi.EffectMarker;
import dev.consistencykit.core.spi.GuardedResult;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.MarkerWrite;
import dev.consistencykit.core.spi.MongoErrors;
import dev.consistencykit.core.spi.Names;
import dev.consistencykit.core.spi.OnceEffects;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.core.spi.UpdateOutcome;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobRequest;

/**
 * Enqueueing atomically with the application's own write (the outbox) and relaying outbox entries.
 */
public final class JobOutbox {

    private static final Logger LOG = LoggerFactory.getLogger(JobOutbox.class);

    private final JobQueueConfig config;
    private final JobStore store;
    private final JobRecording recording;
    private final JobCounters counters;
    private final Supplier<String> ownerIds;
    /** Outbox reservations seen by this instance's relay, {@code [collection, document, job, call]}, and when. */
    private final Map<List<Object>, Long> reservationsSeen = new ConcurrentHashMap<>();
    /** At most this many documents' reservations looked at per relay pass. */
    private static final int RESERVATIONS_PER_PASS = 1000;

    /** The outbox, through the store, with the recording of jobs (a relayed entry is recorded as a job). */
    JobOutbox(JobQueueConfig config, JobStore store, JobRecording recording, JobCounters counters,
              Supplier<String> ownerIds) {
        this.config = config;
        this.store = store;
        this.recording = recording;
        this.counters = counters;
        this.ownerIds = ownerIds;
    }

    // ---------------------------------------------------------------- enqueue with a business write

    /**
     * What one outbox write found: written (by this call, or an earlier attempt of it), recorded (the queue holds a job
     * of this id, which some earlier write enqueued: this call wrote nothing, the business update included), no
     * document, refused.
     */
    private enum Written { WRITTEN, RECORDED, MISSING, REFUSED }

    /** What {@link #fireWith} did with an occurrence's job. */
    enum Fired {
        /** The business update and the job were written together. */
        WRITTEN,
        /** The queue holds a job of this id already, which an earlier write enqueued: nothing was written. */
        TAKEN,
        /** The document is missing or its filter did not match: nothing was written. */
        NOT_WRITTEN
    }

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
                                             Bson businessFilter, Bson businessUpdate, EncodedJob job) {
        checkDedupeKeys(List.of(job));
        String nonce = ownerIds.get();
        Written written = updateWith(business, documentId, businessFilter, businessUpdate, job, nonce);
        if (written == Written.RECORDED) {
            return Optional.of(new OperationId(queuedId(job)));   // an earlier call with this job id wrote it
        }
        return finish(business, documentId, written, List.of(job), nonce).map(ids -> ids.get(0));
    }

    /**
     * {@link #enqueueWith} for a schedule's occurrence, telling a write of the move and the job together from a job id
     * an earlier write recorded: a firing of an older definition of the schedule, or of this one before a clock stepped
     * back, at the same time. The caller must move the schedule on without it, or fire the same taken id forever.
     */
    Fired fireWith(MongoCollection<Document> schedules, Object name, Bson filter, Bson move, EncodedJob job) {
        checkDedupeKeys(List.of(job));
        String nonce = ownerIds.get();
        Written written = updateWith(schedules, name, filter, move, job, nonce);
        if (written == Written.RECORDED) {
            return Fired.TAKEN;
        }
        return finish(schedules, name, written, List.of(job), nonce).isPresent() ? Fired.WRITTEN : Fired.NOT_WRITTEN;
    }

    /**
     * Inserts {@code document} carrying {@code jobs} in its outbox: one atomic write, the document and its jobs
     * together; then relays them. The insert is its own guard (a second insert under the same {@code _id} is refused
     * by the server), and a retry after a lost reply first asks the queue whether a relayer already moved this call's
     * jobs on (their records keep this call's nonce until this call releases them), so a document the application
     * changed or deleted since is never written again.
     *
     * @param documentId {@code document}'s {@code _id}
     * @return the jobs' ids, in order; empty if a document with this {@code _id} exists that this call did not write
     *         (nothing was written)
     */
    public Optional<List<OperationId>> insertWith(MongoCollection<Document> business, Object documentId,
                                                  BsonDocument document, List<EncodedJob> jobs) {
        checkDedupeKeys(jobs);
        String nonce = ownerIds.get();
        BsonDocument stored = document.clone();
        BsonArray entries = new BsonArray();
        BsonArray marks = new BsonArray();
        for (EncodedJob job : jobs) {
            entries.add(entry(job, nonce).toBsonDocument(BsonDocument.class, business.getCodecRegistry()));
            marks.add(new Document("v", job.id()).toBsonDocument(BsonDocument.class, business.getCodecRegistry())
                    .get("v"));
        }
        stored.put(OUTBOX, entries);
        stored.put(OUTBOX_WRITTEN, marks);
        Values.checkSize(config.name(), "document", stored, Values.MAX_DOCUMENT_BYTES);
        MongoCollection<BsonDocument> raw = business.withDocumentClass(BsonDocument.class);
        Written written = insertOnly(business, documentId, jobs.get(0).id(), nonce, "insert with jobs", () -> {
            raw.insertOne(stored);
            return true;
        });
        return finish(business, documentId, written, jobs, nonce);
    }

    /**
     * Upserts document {@code documentId} together with {@code job}: when the document exists, exactly as
     * {@link #enqueueWith}; when it does not, one insert-only upsert (its filter also asks for an {@code _id} other
     * than its own, which no document has, so the server either inserts the document the filter's equalities and the
     * update make, or refuses with a duplicate key and changes nothing). A duplicate key means another writer created
     * the document meanwhile, or an earlier attempt of this call did: the call tells which from its entry on the
     * document or its job in the queue, and otherwise goes on as {@link #enqueueWith} on the document now there.
     *
     * @return the job's id; empty if the document exists and did not match {@code businessFilter}
     */
    public Optional<OperationId> upsertWith(MongoCollection<Document> business, Object documentId,
                                            Bson businessFilter, Bson businessUpdate, EncodedJob job) {
        checkDedupeKeys(List.of(job));
        String nonce = ownerIds.get();
        Written written = Written.MISSING;
        for (int round = 0; round < 4 && written == Written.MISSING; round++) {
            written = updateWith(business, documentId, businessFilter, businessUpdate, job, nonce);
            if (written != Written.MISSING) {
                break;
            }
            List<Bson> filters = new ArrayList<>();
            filters.add(eq("_id", documentId));
            if (businessFilter != null) {
                filters.add(businessFilter);
            }
            filters.add(nin("_id", List.of(documentId)));   // matches no document: the upsert only ever inserts
            Bson filter = and(filters);
            Bson push = Updates.combine(Updates.push(OUTBOX, entry(job, nonce)), Updates.push(OUTBOX_WRITTEN,
                    job.id()));
            Bson update = businessUpdate == null ? push : Updates.combine(businessUpdate, push);
            written = insertOnly(business, documentId, job.id(), nonce, "upsert with job",
                    () -> business.updateOne(filter, update, new UpdateOptions().upsert(true)).getUpsertedId() != null);
            if (written == Written.REFUSED) {
                written = Written.MISSING;   // created by another writer meanwhile: go on as an update of it
            }
        }
        return finish(business, documentId, written, List.of(job), nonce).map(ids -> ids.get(0));
    }

    /** The outbox entry of {@code job} written by the call {@code nonce}. */
    private static Document entry(EncodedJob job, String nonce) {
        return new Document("_id", job.id()).append("job", job.fields()).append("delayMillis", job.delay().toMillis())
                .append("n", nonce);
    }

    /**
     * A key another job holds with other content is a conflict: refused before the business write, not found by the
     * relay after it.
     */
    private void checkDedupeKeys(List<EncodedJob> jobs) {
        for (EncodedJob job : jobs) {
            recording.requireSetup(job);
            String dedupeKey = job.fields().getString(DEDUPE);
            if (dedupeKey == null) {
                continue;
            }
            Document holder = config.retryPolicy().execute(config.name(), job.id(), "read dedupe key",
                    () -> store.byDedupeKey(dedupeKey));
            if (holder != null && !recording.sameJob(holder, job)) {
                throw new IdempotencyConflictException(config.name(), job.id(), "dedupe key '" + dedupeKey + "' is"
                        + " already used by a job with another type or payload (" + holder.get("_id") + "); nothing"
                        + " was written");
            }
        }
    }

    /**
     * After the write: relays what it wrote, notes that this call will not write its jobs again (their records may
     * go once done: the store's outbox holds) and answers the jobs' ids as the queue holds them.
     */
    private Optional<List<OperationId>> finish(MongoCollection<Document> business, Object documentId,
                                               Written written, List<EncodedJob> jobs, String nonce) {
        if (written != Written.WRITTEN) {
            return Optional.empty();
        }
        try {
            relay(business, documentId);
        } finally {
            for (EncodedJob job : jobs) {
                store.outboxWrote(job.id(), nonce);
            }
        }
        List<OperationId> ids = new ArrayList<>();
        for (EncodedJob job : jobs) {
            ids.add(new OperationId(queuedId(job)));
        }
        return Optional.of(ids);
    }

    /**
     * Sends an insert (or insert-only upsert) that a duplicate key refuses, retried as the policy says. Before a
     * resend, the queue is asked whether a relayer already moved this call's first job on: then an earlier attempt
     * landed, and a resend could write a document the application has changed or deleted since.
     *
     * @param send the write: true when it inserted
     */
    private Written insertOnly(MongoCollection<Document> business, Object documentId, Object jobId, String nonce,
                               String what, BooleanSupplier send) {
        boolean[] sentBefore = {false};
        if (recorded(jobId)) {
            return Written.WRITTEN;   // a call with this job id wrote it and the relay moved it on
        }
        boolean inserted = config.retryPolicy().execute(config.name(), jobId, what, () -> {
            if (sentBefore[0] && heldFor(jobId, nonce)) {
                return true;
            }
            sentBefore[0] = true;
            try {
                return send.getAsBoolean();
            } catch (MongoException e) {
                // another document has this _id; a violation of one of the application's own unique indexes is the
                // server refusing the document, typed as such by the call's boundary. Which index refused is what the
                // server reports structurally, or else what a read of the _id finds: never the message's wording
                if (!MongoErrors.isDuplicateKey(e)) {
                    throw e;
                }
                Optional<Set<String>> index = MongoErrors.duplicateKeyFields(e);
                boolean duplicateId = index.isPresent() ? index.get().equals(Set.of("_id"))
                        : business.withReadPreference(ReadPreference.primary()).find(eq("_id", documentId))
                        .projection(Projections.include("_id")).first() != null;
                if (!duplicateId) {
                    throw e;
                }
                return false;
            }
        });
        if (inserted) {
            return Written.WRITTEN;
        }
        Document current = config.retryPolicy().execute(config.name(), jobId, "read outbox", () -> business
                .withReadPreference(ReadPreference.primary()).find(eq("_id", documentId))
                .projection(Projections.include(OUTBOX)).first());
        return (current != null && entryOf(current, jobId, nonce)) || heldFor(jobId, nonce) ? Written.WRITTEN
                : Written.REFUSED;
    }

    /** {@link #queuedFor}, retried as the instance's policy says. */
    private boolean heldFor(Object jobId, String nonce) {
        return config.retryPolicy().execute(config.name(), jobId, "read relayed job", () -> queuedFor(jobId, nonce));
    }

    /**
     * Whether the queue holds job {@code jobId} relayed from the outbox call {@code nonce} (its record keeps the call's
     * nonce until the call has its answer): one read from the primary.
     */
    private boolean queuedFor(Object jobId, String nonce) {
        return store.queuedFor(jobId, nonce);
    }

    /** Whether the queue holds job {@code jobId}, from whichever call: read from the primary. */
    private boolean recorded(Object jobId) {
        return config.retryPolicy().execute(config.name(), jobId, "read job", () -> store.holds(jobId));
    }

    /** Whether {@code doc}'s outbox holds job {@code jobId} written by the call {@code nonce}. */
    private static boolean entryOf(Document doc, Object jobId, String nonce) {
        for (Object e : Values.arrayOf(doc, OUTBOX)) {
            if (e instanceof Document d && Objects.equals(d.get("_id"), jobId) && nonce.equals(d.get("n"))) {
                return true;
            }
        }
        return false;
    }

    /** The reserve-then-apply write of {@link #enqueueWith}, by the call {@code nonce}. */
    private Written updateWith(MongoCollection<Document> business, Object documentId, Bson businessFilter,
                               Bson businessUpdate, EncodedJob job, String nonce) {
        Object jobId = job.id();
        List<MarkerWrite> one = List.of(MarkerWrite.of(documentId, null));
        for (int round = 0; ; round++) {
            GuardedResult reserved = config.retryPolicy().execute(config.name(), jobId, "reserve outbox entry",
                    () -> OnceEffects.reserve(business, OUTBOX_MARKER, jobId, nonce, one)).get(documentId);
            if (reserved.outcome() == UpdateOutcome.MISSING) {
                return Written.MISSING;
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
                return Written.WRITTEN;   // an earlier call with this job id wrote it; this call writes nothing more
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
                return Written.REFUSED;
            }
        }
        if (recorded(jobId)) {
            // a call with this job id wrote it and the relay moved it on: the id is the job's while its record is
            // kept, so this call writes nothing (its reservation, taken only now, came after that relay's settling)
            config.retryPolicy().run(config.name(), jobId, "release outbox reservation",
                    () -> OnceEffects.release(business, OUTBOX_MARKER, jobId, nonce, List.of(documentId)));
            return Written.RECORDED;
        }
        Bson update = businessUpdate == null ? Updates.push(OUTBOX, entry(job, nonce))
                : Updates.combine(businessUpdate, Updates.push(OUTBOX, entry(job, nonce)));
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
                return Written.WRITTEN;
            }
            case MISSING -> {
                return Written.MISSING;
            }
            default -> {
                Document current = written.document().orElse(null);
                if (current != null && OUTBOX_MARKER.evidence(current, jobId, nonce) == EffectMarker.Evidence.NONE) {
                    throw new LeaseLostException(config.name(), jobId, 0L, "the outbox reservation of job " + jobId
                            + " on document " + Values.show(documentId) + " was released while this call was"
                            + " paused (a relay took it for abandoned); nothing was written: call again");
                }
                if (current != null && OUTBOX_MARKER.evidence(current, jobId, nonce) == EffectMarker.Evidence
                        .RESERVED) {
                    // the business filter did not match: give the reservation back
                    config.retryPolicy().run(config.name(), jobId, "release outbox reservation",
                            () -> OnceEffects.release(business, OUTBOX_MARKER, jobId, nonce, List.of(documentId)));
                }
                return Written.REFUSED;
            }
        }
    }

    /** The id under which the queue holds {@code job}: its own, or, deduplicated, the job that holds its key. */
    Object queuedId(EncodedJob job) {
        String key = job.fields().getString(DEDUPE);
        if (key == null) {
            return job.id();
        }
        Document holder = config.retryPolicy().execute(config.name(), job.id(), "read dedupe key",
                () -> store.byDedupeKey(key, "_id"));
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
        if (queuedFor(jobId, nonce)) {   // already inside the write's retry: read once
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

    /**
     * Relays every business document of {@code business} that carries outboxed jobs, after releasing the outbox
     * reservations of calls that died between their reservation and their write: each reservation this instance has
     * seen for {@code staleAfter} (every one when it is zero). Releasing is always safe (a reservation is never
     * applied after its release); a call that was only paused that long is refused its write and told
     * ({@link dev.consistencykit.core.LeaseLostException}), nothing written. Clocks decide only when, never whether.
     */
    public int relayAll(MongoCollection<Document> business, Duration staleAfter) {
        releaseAbandoned(business, staleAfter);
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
            EncodedJob job = storedEntry(doc.get("_id"), raw);
            if (job == null) {
                continue;
            }
            Object jobId = job.id();
            String nonce = ownerIds.get();
            Document recorded = null;
            try {
                Document from = new Document("c", business.getNamespace().getCollectionName())
                        .append("d", doc.get("_id"));
                recorded = recording.record(new EncodedJob(jobId, new Document(job.fields()).append(HELD, nonce)
                        .append(HELD_FROM, from), job.delay()), nonce);
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
                long deleted = !mine ? 0 : store.withdrawRelayed(jobId, nonce);
                if (mine && deleted == 0) {
                    store.recorded(jobId,
                            nonce);   // released to the workers by another relayer: the entry's job
                }
                continue;
            }
            if (recorded != null) {
                Object queued = recorded.get("_id");
                config.retryPolicy().run(config.name(), jobId, "release relayed job", () -> release(queued, null));
            }
            Bson pullEntry = Updates.pull(OUTBOX, new Document("_id", jobId));
            config.retryPolicy().execute(config.name(), jobId, "clear outbox",
                    () -> OnceEffects.settle(business, OUTBOX_MARKER, jobId,
                            // the last job written there: its entry is the outbox's only one, and the array goes
                            List.of(new MarkerWrite(doc.get("_id"), null, pullEntry, Updates.unset(OUTBOX))))
                            .get(doc.get("_id")));
            if (mine) {
                store.recorded(jobId, nonce);
            }
            counters.relayed.increment();
            moved++;
        }
        return moved;
    }

    /**
     * Releases the held job {@code jobId} to the workers (the one held by {@code nonce} only, when not null): one
     * write.
     */
    private void release(Object jobId, String nonce) {
        store.releaseHeld(jobId, nonce);
    }

    /**
     * Finishes what relayers that died holding a job left ({@link #relayDocument}): each job held since before
     * {@code cutoff} (server time; it decides only when, never whether) is released when its outbox entry is still
     * there, and withdrawn when it is gone (the entry was relayed and settled by another relayer before this record was
     * written, so this record is a resurrection, never run: it was held). Either write is guarded by the holder's
     * nonce, so a relayer that was only paused and wakes finds its job released or withdrawn and does nothing twice.
     * Bounded: at most {@code limit} jobs a pass, by the {@code held} index.
     *
     * @return {@code [released, withdrawn, left]} (left: its origin unreadable, logged)
     */
    HeldJobs releaseHeld(java.util.Date cutoff, int limit) {
        int released = 0;
        int withdrawn = 0;
        int left = 0;
        List<Document> held = store.heldBefore(cutoff, limit, HELD, HELD_FROM);
        for (Document job : held) {
            Object jobId = job.get("_id");
            if (!(job.get(HELD) instanceof String nonce) || !(job.get(HELD_FROM) instanceof Document from)
                    || !(from.get("c") instanceof String c) || !Names.isCollectionName(c)
                    || !Ids.isDocumentId(from.get("d"))) {
                LOG.warn("[{}] job {} is held by a relayer but its origin is unreadable; left for an operator",
                        config.name(), Values.show(jobId));
                left++;
                continue;
            }
            MongoCollection<Document> business = store.collection(c);
            if (stillOutboxed(business, from.get("d"), jobId)) {
                config.retryPolicy().run(config.name(), jobId, "release held job", () -> release(jobId, nonce));
                released++;
                LOG.info("[{}] released job {}, held by relayer {} that went quiet, to the workers", config.name(),
                        Values.show(jobId), nonce);
            } else {
                long n = store.withdrawHeld(jobId, nonce);
                withdrawn += (int) n;
                LOG.info("[{}] withdrew job {}, held by relayer {} that went quiet after its outbox entry was"
                        + " relayed by another", config.name(), Values.show(jobId), nonce);
            }
        }
        return new HeldJobs(released, withdrawn, left);
    }

    /** What {@link #releaseHeld} did. */
    record HeldJobs(int released, int withdrawn, int left) {
    }

    /** Releases the outbox reservations this instance has seen for {@code staleAfter}; forgets those gone. */
    private void releaseAbandoned(MongoCollection<Document> business, Duration staleAfter) {
        List<OnceEffects.Reservation> found = config.retryPolicy().execute(config.name(), null,
                "find outbox reservations", () -> OnceEffects.reservations(business, OUTBOX_MARKER,
                        RESERVATIONS_PER_PASS));
        String namespace = business.getNamespace().getFullName();
        long now = System.nanoTime();
        Set<List<Object>> present = new HashSet<>();
        for (OnceEffects.Reservation r : found) {
            List<Object> key = List.of(namespace, Ids.idKey(r.documentId()), Ids.idKey(r.operationId()), r.nonce());
            present.add(key);
            Long first = reservationsSeen.putIfAbsent(key, now);
            if (staleAfter.isZero() || (first != null && now - first >= staleAfter.toNanos())) {
                config.retryPolicy().run(config.name(), r.operationId(), "release abandoned outbox reservation",
                        () -> OnceEffects.release(business, OUTBOX_MARKER, r.operationId(), r.nonce(),
                                List.of(r.documentId())));
                reservationsSeen.remove(key);
                LOG.info("[{}] released the outbox reservation of job {} on document {} (call {}): its call wrote"
                        + " nothing for {}", config.name(), r.operationId(), r.documentId(), r.nonce(), staleAfter);
            }
        }
        reservationsSeen.keySet().removeIf(k -> k.get(0).equals(namespace) && !present.contains(k));
    }

    /** Whether {@code documentId}'s outbox still holds job {@code jobId}: read from the primary. */
    boolean stillOutboxed(MongoCollection<Document> business, Object documentId, Object jobId) {
        return config.retryPolicy().execute(config.name(), jobId, "read outbox entry", () -> business
                .withReadPreference(ReadPreference.primary()).find(and(eq("_id", documentId),
                        eq(OUTBOX + "._id", jobId))).projection(Projections.include("_id")).first()) != null;
    }

    /**
     * An outbox entry read back from a business document, validated again as input: a collection the application
     * writes to may hold anything. An invalid entry is logged and left alone (never enqueued, never removed).
     */
    EncodedJob storedEntry(Object documentId, Object raw) {
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
            if (fields.get(JobSchema.LINE_KEY) instanceof String line && line.startsWith(JobSchema.ORDER_LINE)) {
                request = request.withOrderingKey(line.substring(JobSchema.ORDER_LINE.length()));
            } else if (fields.get(JobSchema.LINE_KEY) instanceof String line && line.startsWith(JobSchema.LIMIT_LINE)
                    && fields.get(JobSchema.LINE_LIMIT) instanceof Integer limit) {
                request = request.withConcurrencyKey(line.substring(JobSchema.LIMIT_LINE.length()), limit);
            } else if (fields.containsKey(JobSchema.LINE_KEY)) {
                throw new InvalidInputException(config.name(), OUTBOX, "an outbox entry's line key must be an"
                        + " ordering or a concurrency key this queue wrote");
            }
            // what its call carried to the run (its trace) goes with it, checked again like the rest
            EncodedJob encoded = recording.encode(request).carrying(EncodedJob.carriedBy(fields));
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
