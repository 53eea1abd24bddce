package dev.consistencykit.jobqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadFactory;
import java.util.function.Supplier;

import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.Guarantees;
import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.MaintenanceStep;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyEntry;
import dev.consistencykit.core.spi.Calls;
import dev.consistencykit.core.spi.FilterGrammar;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.OwnerIds;
import dev.consistencykit.core.spi.PatternRegistry;
import dev.consistencykit.core.spi.UpdateGrammar;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.core.spi.WriteConcerns;
import dev.consistencykit.jobqueue.internal.EncodedJob;
import dev.consistencykit.jobqueue.internal.JobOutbox;
import dev.consistencykit.jobqueue.internal.JobParts;
import dev.consistencykit.jobqueue.internal.JobPruner;
import dev.consistencykit.jobqueue.internal.JobRecording;
import dev.consistencykit.jobqueue.internal.JobRecovery;
import dev.consistencykit.jobqueue.internal.JobRunner;
import dev.consistencykit.jobqueue.internal.JobSchedules;
import dev.consistencykit.jobqueue.internal.JobSchema;
import dev.consistencykit.jobqueue.internal.JobStore;

/**
 * A durable job queue in a MongoDB collection: a multi-document change is written as one job, workers claim jobs
 * atomically, run their handler, and mark them done; a sweeper requeues jobs whose worker died.
 *
 * <p><b>What it guarantees.</b> A job's existence is one atomic write (or part of the application's own write, through
 * {@link #enqueueWith}); each job is run to {@code done} or {@code dead}; a job's effect is applied once however
 * often its handler runs, when the handler writes through {@link JobContext#applyOnce} or idempotent updates; a worker
 * whose lease was taken over (paused, partitioned) can neither mark the job done or failed nor re-apply an effect,
 * however late it wakes. Safety never depends on clocks; leases only decide when another worker may take over.
 *
 * <p><b>What it leaves on documents.</b> {@link JobContext#applyOnce} runs the {@link dev.consistencykit.core.spi.OnceEffects}
 * lifecycle: a reservation in {@code reservedJobs}, then the effect with a mark in {@code appliedJobs}, both removed
 * when the job is done. A document carries marks only of the jobs in flight on it (and of dead jobs, which a replay
 * may run again), never of every job that ever touched it.
 *
 * <p><b>What a reader may see.</b> A job's effects one document at a time (for "A befriends B", A's list may show B
 * before B's shows A) until the job is done; never an effect twice.
 *
 * <p>Thread-safe; any number of instances in any number of processes may share the collection.
 *
 * <pre>{@code
 * JobQueue queue = JobQueue.builder(db)
 *         .handler("befriend", ctx -> {
 *             Document p = ctx.payload();
 *             ctx.applyOnce("users", p.get("a"), Updates.push("friends", p.get("b")));
 *             ctx.applyOnce("users", p.get("b"), Updates.push("friends", p.get("a")));
 *         })
 *         .build();
 * queue.ensureIndexes();
 * queue.enqueue(JobRequest.of("befriend", new Document("a", "ann").append("b", "bob")));
 * try (JobWorkers workers = queue.startWorkers(4)) {   // or queue.processNext() in your own loop
 *     awaitShutdown();
 * }
 * }</pre>
 */
public final class JobQueue extends StrategyEntry<JobRequest, JobQueueConfig, JobQueueMetrics> {

    /** The boundary of the static helpers, which have no instance: default retry and timeout. */
    private static final Calls STATIC_CALLS = new Calls(JobQueueConfig.DEFAULT_NAME, RetryPolicy.DEFAULT,
            Calls.DEFAULT_OPERATION_TIMEOUT);
    private final JobStore store;
    private final JobRecording recording;
    private final JobOutbox outbox;
    private final JobRunner runner;
    private final JobRecovery recovery;
    private final JobSchedules schedules;
    private final JobPruner pruner;
    private final JobQueueOperator operator;
    private final JobQueueListener listener;

    private JobQueue(JobQueueConfig config, Calls calls, JobParts parts) {
        super(config, calls, parts.store(), parts.recovery(), parts.audit());
        this.store = parts.store();
        this.recording = parts.recording();
        this.outbox = parts.outbox();
        this.runner = parts.runner();
        this.recovery = parts.recovery();
        this.schedules = parts.schedules();
        this.pruner = parts.pruner();
        this.listener = parts.notices().listener();
        this.operator = new JobQueueOperator(calls, parts.audit(), parts.deadLetters(), parts.actions(),
                parts.schedules());
    }

    /** A builder for a queue on {@code database}. */
    public static Builder builder(MongoDatabase database) {
        return new Builder(database);
    }

    /**
     * A builder per instance of this pattern that registered itself in {@code database} (from its
     * {@code ensureIndexes()}), with its name, collections and fields and every other setting at its default: how an
     * operator's tool rebuilds an instance without the application's code. A registration this pattern did not write
     * is skipped and logged, not obeyed.
     */
    public static List<Builder> registered(MongoDatabase database) {
        return PatternRegistry.builders(database, "job-queue", Set.of("jobs"), Set.of(),
                r -> {
                    Builder b = builder(database).name(r.name()).collection(r.collections().get("jobs"));
                    String schedules = r.collections().get("schedules");
                    String keys = r.collections().get("keys");
                    b = schedules == null ? b : b.schedulesCollection(schedules);
                    return keys == null ? b : b.keysCollection(keys);
                });
    }

    /** Same as {@link #enqueue(JobRequest)}. */
    @Override
    public OperationId submit(JobRequest job) {
        return enqueue(job);
    }

    /**
     * Records a job (one write). The same id, or the same dedupe key, with the same type and payload returns the
     * existing job.
     *
     * @throws InvalidInputException        if the job is invalid (nothing is written)
     * @throws IdempotencyConflictException if its id or dedupe key belongs to a job with another type or payload
     */
    public OperationId enqueue(JobRequest job) {
        EncodedJob encoded = recording.encode(job);
        return calls.sending("enqueue", encoded.id(), () -> recording.enqueue(encoded.carrying(calls.carried())));
    }

    /**
     * Enqueues {@code job} and runs it in this thread if it is due and no worker holds it.
     *
     * @return committed when done, aborted when dead, in flight when it failed and will be retried, is delayed, or
     *         another worker holds it
     */
    @Override
    public OperationResult apply(JobRequest job) {
        EncodedJob encoded = recording.encode(job);
        return calls.applicationCode("apply", encoded.id(), () -> runner.apply(encoded));
    }

    /**
     * Makes a job's existence atomic with the application's own single-document write: applies {@code businessUpdate}
     * to document {@code documentId} of {@code business} and, in the same atomic write, records {@code job} in that
     * document's {@code jobOutbox} array; then moves it into the queue. If the process dies after the first write, the
     * job is not lost: {@link #relayOutbox} (run it with recovery) moves it later, exactly once.
     *
     * <p>The business update is applied exactly once per job id, however this call's requests are retried and
     * whatever relayers do meanwhile: the call first reserves the job id on the document ({@code jobOutboxReserved},
     * no effect), and the business write applies only under that reservation, which it consumes. A retry after a lost
     * reply is therefore refused even once a relayer has moved the job on and removed every trace of it from the
     * document, and the call still reports the job it wrote. Costs two round trips more than a plain update (the
     * reservation, and a look at the queue for the job id), then the relay of the job.
     *
     * @param businessFilter an extra condition on the business document, or {@code null}
     * @return the job's id when this call, or an earlier call with the same job id, wrote it; empty if the business
     *         document is missing or did not match the filter (nothing was written)
     * @throws InvalidInputException   if the job or the ids are invalid (nothing is written)
     * @throws dev.consistencykit.core.OutcomeUnknownException if a write whose reply was lost can no longer be told
     *         applied or not
     */
    public Optional<OperationId> enqueueWith(MongoCollection<Document> business, Object documentId,
                                             Bson businessFilter, Bson businessUpdate, JobRequest job) {
        Objects.requireNonNull(business, "business");
        Object id = Ids.documentId(name(), "documentId", documentId, business.getCodecRegistry());
        Bson filter = businessFilter == null ? null
                : FilterGrammar.condition(name(), "businessFilter", businessFilter, business.getCodecRegistry());
        Bson update = businessUpdate == null ? null : UpdateGrammar.updateSpec(name(), "businessUpdate", businessUpdate,
                business.getCodecRegistry(), JobSchema.EFFECT_FIELDS);
        EncodedJob encoded = recording.encode(job);
        WriteConcerns.acknowledged(name(), business);
        MongoCollection<Document> bounded = Calls.bounded(business, calls.operationTimeout());
        return calls.sending("enqueue with a business write", encoded.id(),
                () -> outbox.enqueueWith(bounded, id, filter, update, encoded.carrying(calls.carried())));
    }

    /**
     * Inserts {@code document} into {@code business} together with {@code job}, in one atomic write: the job sits in
     * the new document's {@code jobOutbox} array, then this call moves it into the queue (or, if the process dies
     * first, {@link #relayOutbox} does, exactly once). "Create the order and enqueue its shipping" can no longer be
     * split by a crash.
     *
     * <p>Exactly once, however the call's requests are retried: the insert is its own guard (the server refuses a
     * second document under one {@code _id}), and before a resend the call asks the queue whether a relayer already
     * moved its job on: the job's record keeps the call's nonce until the call says it will write no more, so even a
     * call paused past every retention never writes a document the application has changed or deleted since. One
     * boundary: a document deleted by the application before its job was relayed takes the job with it (as any
     * document takes its fields).
     *
     * @param business the collection of {@code document}, with the codec registry that encodes it
     * @param document a {@link Document}, or any value the collection's codec registry encodes as a document (a
     *                 record, a POJO); it must carry its {@code _id}, except a {@link Document}, which is given a new
     *                 {@code ObjectId} when it has none (as the driver's {@code insertOne} does)
     * @return the job's id; empty if a document with this {@code _id} already exists that this call did not write
     *         (nothing was written)
     * @throws InvalidInputException if the document, its id or the job is invalid (nothing is written)
     * @throws IdempotencyConflictException if the job's dedupe key belongs to a job with another type or payload
     */
    public Optional<OperationId> insertWith(MongoCollection<?> business, Object document, JobRequest job) {
        Objects.requireNonNull(job, "job");
        return insertWith(business, document, List.of(job)).map(ids -> ids.get(0));
    }

    /**
     * Inserts {@code document} together with several jobs, in one atomic write, as
     * {@link #insertWith(MongoCollection, Object, JobRequest)} does with one.
     *
     * @return the jobs' ids, in the order given
     * @throws InvalidInputException if {@code jobs} is empty or two of them share an id
     */
    public Optional<List<OperationId>> insertWith(MongoCollection<?> business, Object document,
                                                  List<JobRequest> jobs) {
        Objects.requireNonNull(business, "business");
        Objects.requireNonNull(jobs, "jobs");
        if (jobs.isEmpty()) {
            throw new InvalidInputException(name(), "jobs", "an insert with jobs needs at least one job");
        }
        if (document instanceof Document d && !d.containsKey("_id")) {
            d.put("_id", new org.bson.types.ObjectId());
        }
        BsonDocument encoded = Values.plainDocument(name(), "document", document, business.getCodecRegistry());
        if (!encoded.containsKey("_id")) {
            throw new InvalidInputException(name(), "document._id", "the document must carry its _id, so that a retry"
                    + " writes the same document");
        }
        Object id = Ids.documentId(name(), "document._id", encoded.get("_id"), business.getCodecRegistry());
        for (String field : JobSchema.EFFECT_FIELDS) {
            if (encoded.containsKey(field)) {
                throw new InvalidInputException(name(), "document." + field, field + " is the queue's own field on"
                        + " business documents; the document must not carry it");
            }
        }
        List<EncodedJob> encodedJobs = new ArrayList<>();
        Set<Object> ids = new HashSet<>();
        for (JobRequest job : jobs) {
            EncodedJob e = recording.encode(Objects.requireNonNull(job, "job"));
            if (!ids.add(Ids.idKey(e.id()))) {
                throw new InvalidInputException(name(), "jobs", "two jobs share the id " + Values.show(e.id()));
            }
            encodedJobs.add(e);
        }
        MongoCollection<Document> bounded = Calls.bounded(WriteConcerns.acknowledged(name(), business
                .withDocumentClass(Document.class)), calls.operationTimeout());
        return calls.sending("insert with jobs", encodedJobs.get(0).id(),
                () -> outbox.insertWith(bounded, id, encoded, encodedJobs.stream()
                        .map(j -> j.carrying(calls.carried())).toList()));
    }

    /**
     * Upserts document {@code documentId} of {@code business} together with {@code job}, in one atomic write: when the
     * document exists, exactly as {@link #enqueueWith} (the update applied once, under a reservation); when it does
     * not, the document the filter's equalities and {@code businessUpdate} make (with {@code $setOnInsert} as usual)
     * is inserted carrying the job. Exactly once, with the same relay and the same retry guard as
     * {@link #insertWith(MongoCollection, Object, JobRequest)}.
     *
     * @param businessFilter an extra condition on an existing document, or {@code null}; its equalities are fields of
     *                       a document it creates
     * @return the job's id; empty if the document exists and did not match {@code businessFilter} (nothing written)
     * @throws InvalidInputException if the job, the id, the filter or the update is invalid (nothing is written)
     */
    public Optional<OperationId> upsertWith(MongoCollection<?> business, Object documentId, Bson businessFilter,
                                            Bson businessUpdate, JobRequest job) {
        Objects.requireNonNull(business, "business");
        Object id = Ids.documentId(name(), "documentId", documentId, business.getCodecRegistry());
        Bson filter = businessFilter == null ? null
                : FilterGrammar.condition(name(), "businessFilter", businessFilter, business.getCodecRegistry());
        if (filter != null && namesId(filter.toBsonDocument(BsonDocument.class, business.getCodecRegistry()))) {
            throw new InvalidInputException(name(), "businessFilter", "the filter of an upsert must not name _id:"
                    + " the document's id is documentId, and an inserted document takes it from there");
        }
        Bson update = businessUpdate == null ? null : UpdateGrammar.updateSpec(name(), "businessUpdate", businessUpdate,
                business.getCodecRegistry(), JobSchema.EFFECT_FIELDS);
        EncodedJob encoded = recording.encode(job);
        MongoCollection<Document> bounded = Calls.bounded(WriteConcerns.acknowledged(name(), business
                .withDocumentClass(Document.class)), calls.operationTimeout());
        return calls.sending("upsert with job", encoded.id(),
                () -> outbox.upsertWith(bounded, id, filter, update, encoded.carrying(calls.carried())));
    }

    /**
     * Moves every outboxed job of {@code business} into the queue; safe from many processes at once. Also releases
     * the outbox reservations of calls that died between their reservation and their write, once this instance has
     * seen one held for {@link JobQueueConfig#staleAfter()}: run it with recovery.
     */
    public int relayOutbox(MongoCollection<?> business) {
        return relayOutbox(business, config.staleAfter());
    }

    /**
     * {@link #relayOutbox(MongoCollection)}, releasing the reservations this instance has seen held for
     * {@code staleAfter}, or every one when it is zero (a tool that knows no call of the application is running). A
     * call that was only paused is refused its write, nothing written, with a
     * {@link dev.consistencykit.core.LeaseLostException}.
     *
     * @throws IllegalArgumentException if {@code staleAfter} is negative
     */
    public int relayOutbox(MongoCollection<?> business, Duration staleAfter) {
        Objects.requireNonNull(business, "business");
        InterruptedOperation.checkQuery(staleAfter, 1);
        MongoCollection<Document> bounded = Calls.bounded(business.withDocumentClass(Document.class),
                calls.operationTimeout());
        return calls.idempotent("relay outbox", () -> outbox.relayAll(bounded, staleAfter));
    }

    /** Whether a filter names {@code _id}, at its top level or inside {@code $and}/{@code $or}/{@code $nor}. */
    private static boolean namesId(BsonDocument filter) {
        for (String key : filter.keySet()) {
            if (key.equals("_id") || key.startsWith("_id.")) {
                return true;
            }
            if (filter.get(key).isArray()) {
                for (org.bson.BsonValue clause : filter.get(key).asArray()) {
                    if (clause.isDocument() && namesId(clause.asDocument())) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** Creates the index {@link #relayOutbox} needs on a business collection. */
    public static void ensureOutboxIndex(MongoCollection<?> business) {
        Objects.requireNonNull(business, "business");
        STATIC_CALLS.idempotent("ensure outbox index", () -> JobStore.ensureOutboxIndex(
                Calls.bounded(business.withDocumentClass(Document.class), Calls.DEFAULT_OPERATION_TIMEOUT)));
    }

    /**
     * Creates the indexes {@link #recover} needs on a collection that handlers change through
     * {@link JobContext#applyOnce}, to find the marks a dead worker left there. {@link #ensureIndexes()} creates them
     * on every collection a job has recorded an effect in; call this at start-up for the others.
     */
    public static void ensureEffectIndexes(MongoCollection<Document> collection) {
        Objects.requireNonNull(collection, "collection");
        STATIC_CALLS.idempotent("ensure effect indexes", () -> JobStore.ensureEffectIndexes(
                Calls.bounded(collection, Calls.DEFAULT_OPERATION_TIMEOUT)));
    }

    /**
     * Registers recurring job {@code name}, or changes it: each occurrence {@code schedule} names enqueues a job like
     * {@code template} (its type, payload, priority and attempts; its id is {@code <name>@<occurrence time>}), exactly
     * once however many processes fire it and wherever one dies. Any process with workers fires due occurrences
     * between its claims, and {@link #recover} fires what is left. Registering the same definition again writes
     * nothing, so every process may register its schedules at start; a different one replaces it at once, and an
     * occurrence of the old definition being fired meanwhile is refused (one already fired runs).
     *
     * @return the schedule with its next occurrence
     * @throws InvalidInputException if the name or the template is invalid, the template has a delay or a dedupe key,
     *                               or a cron schedule names no time after now (nothing is written)
     */
    public RecurringJob schedule(String name, Schedule schedule, JobRequest template) {
        Objects.requireNonNull(schedule, "schedule");
        Objects.requireNonNull(template, "template");
        return calls.operation("schedule", name, () -> schedules.define(name, schedule, template));
    }

    /**
     * Removes recurring job {@code name}: no occurrence fires after this returns; one already fired runs.
     *
     * @return whether there was such a schedule
     */
    public boolean unschedule(String name) {
        return calls.operation("unschedule", name, () -> schedules.remove(name));
    }

    /**
     * Fires the recurring jobs' due occurrences now (workers do it between their claims, recovery too): each enqueues
     * its job exactly once, whoever else fires it.
     *
     * @return the occurrences this call fired
     */
    public int fireSchedules() {
        return calls.operation("fire schedules", null, schedules::fireDue);
    }

    /** Claims the highest-priority due job and runs it in this thread. */
    public Optional<OperationResult> processNext() {
        return calls.applicationCode("process next", null, () -> runner.processNext(runner.newOwner()));
    }

    /** Starts {@code workers} worker threads; close the returned handle to stop them gracefully. */
    public JobWorkers startWorkers(int workers) {
        return startWorkers(workers, WorkerThreads.PLATFORM);
    }

    /**
     * Starts {@code workers} workers on threads of kind {@code threads}: {@link WorkerThreads#VIRTUAL} lets a pool of
     * many workers wait on the server without a platform thread each (Java 21 or later).
     *
     * @throws UnsupportedOperationException for virtual threads on a runtime before Java 21 (nothing started)
     * @throws IllegalArgumentException if {@code workers < 1}
     */
    public JobWorkers startWorkers(int workers, WorkerThreads threads) {
        Objects.requireNonNull(threads, "threads");
        return startWorkers(workers, threads.factory(name()));
    }

    /**
     * Starts {@code workers} worker threads made by {@code threadFactory} (for example virtual threads, or threads
     * named and grouped as the application likes).
     *
     * @throws IllegalArgumentException if {@code workers < 1}
     */
    public JobWorkers startWorkers(int workers, ThreadFactory threadFactory) {
        return new JobWorkers(runner, store, schedules, calls, name(), workers, config.lease(), config.maxIdle(),
                listener, threadFactory);
    }

    /**
     * The first half of {@link #recover(Duration)}, without running any job: requeues (or, on their last attempt,
     * kills) every {@code PROCESSING} job when {@code staleAfter} is zero, otherwise those whose lease expired. For a
     * tool that has no handlers; the application's workers then run the requeued jobs. Safe from many processes at
     * once.
     *
     * @return what it did: {@code rolledBack} the jobs requeued; {@code setAside} those killed on their last attempt
     *         (dead: an operator's to replay or discard); {@code skipped} those another process took first
     * @throws IllegalArgumentException if {@code staleAfter} is negative
     */
    public RecoveryReport requeue(Duration staleAfter) {
        InterruptedOperation.checkQuery(staleAfter, 1);
        long start = System.nanoTime();
        JobRecovery.Swept swept = calls.idempotent("requeue", () -> recovery.sweep(staleAfter.isZero()
                ? JobRecovery.Leases.ALL : JobRecovery.Leases.EXPIRED));
        return new RecoveryReport(name(), swept.examined(), 0, swept.requeued(), swept.skipped(),
                Duration.ofNanos(System.nanoTime() - start), swept.dead());
    }

    /** The job types this instance has a handler for. */
    public Set<String> handlerTypes() {
        return Set.copyOf(runner.types());
    }

    /**
     * What an operator calls on this queue: dead letters, jobs found, the backlog, the jobs workers hold, live jobs
     * canceled, rescheduled or run again, schedules paused, resumed or triggered.
     */
    public JobQueueOperator operator() {
        return operator;
    }

    /** Deletes done jobs older than {@link JobQueueConfig#retention()}. */
    public long prune() {
        return calls.idempotent("prune", () -> pruner.prune(config.retention()));
    }

    /**
     * Recovery every 10 s (expired leases requeued, effects settled, reservations released) and pruning of finished
     * jobs older than the retention every hour. Relaying an outbox needs its business collection: add
     * {@code relayOutbox(collection)} as a step of your own.
     */
    @Override
    public List<MaintenanceStep> maintenance() {
        return List.of(MaintenanceStep.of(name() + " recover", Duration.ofSeconds(10), this::recover),
                MaintenanceStep.of(name() + " prune", Duration.ofHours(1), this::prune));
    }

    @Override
    public Guarantees guarantees() {
        return new Guarantees(
                "eventually all: once enqueued, a job runs to done (every effect applied once) or dead (kept with its"
                        + " error, for replay)",
                "the job's effects one document at a time until it is done; never an effect twice",
                "by priority, then run-at time; no order between jobs of equal priority run by different workers, but"
                        + " the jobs of an ordering key run one at a time in the order they reached the queue, and at"
                        + " most a concurrency key's limit of its jobs run at once; each occurrence of a recurring job"
                        + " is enqueued once",
                "expired leases requeued by a fenced compare-and-set; due jobs run by recovery");
    }

    /** Builds a {@link JobQueue}; every setter checks its argument, {@link #build()} their combination. */
    public static final class Builder extends JobQueueConfig.Settings<Builder> {
        private final Map<String, JobHandler> handlers = new HashMap<>();
        private JobQueueListener listener = new JobQueueListener() { };
        private Supplier<String> ownerIds;

        private Builder(MongoDatabase database) {
            super(database);
        }

        /** The handler of jobs of {@code type}. */
        public Builder handler(String type, JobHandler handler) {
            Objects.requireNonNull(type, "type");
            Objects.requireNonNull(handler, "handler");
            if (type.isBlank()) {
                throw new IllegalArgumentException("type must not be blank");
            }
            handlers.put(type, handler);
            return this;
        }

        /** Hooks called as jobs progress. */
        public Builder listener(JobQueueListener value) {
            this.listener = Objects.requireNonNull(value, "listener");
            return this;
        }

        /** Unique worker names (default: name, a random part, a counter). */
        public Builder ownerIds(Supplier<String> value) {
            this.ownerIds = Objects.requireNonNull(value, "ownerIds");
            return this;
        }

        /**
         * Builds the queue.
         *
         * @throws dev.consistencykit.core.UnsafeConfigurationException if the write concern is unacknowledged
         * @throws IllegalStateException if the settings contradict each other
         */
        public JobQueue build() {
            JobQueueConfig built = builtConfig();
            MongoDatabase db = acknowledgedDatabase();
            ServerClock time = serverClockFor(db, built);
            Supplier<String> owners = ownerIds != null ? ownerIds : OwnerIds.sequence(built.name());
            return new JobQueue(built, calls(built), JobParts.of(built, db, time, listener, owners, handlers));
        }
    }
}
