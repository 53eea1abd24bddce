package dev.consistencykit.twophase.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lte;
import static dev.consistencykit.twophase.internal.TransactionCodec.decode;
import static dev.consistencykit.twophase.internal.TransactionDriving.tokenFields;
import static dev.consistencykit.twophase.internal.TransactionFields.CREATED;
import static dev.consistencykit.twophase.internal.TransactionFields.LABEL;
import static dev.consistencykit.twophase.internal.TransactionFields.LAST_ERROR;
import static dev.consistencykit.twophase.internal.TransactionFields.SPEC;
import static dev.consistencykit.twophase.internal.TransactionFields.HISTORY;
import static dev.consistencykit.twophase.internal.TransactionFields.IN_FLIGHT;
import static dev.consistencykit.twophase.internal.TransactionFields.LAST_MODIFIED;
import static dev.consistencykit.twophase.internal.TransactionFields.LEASE;
import static dev.consistencykit.twophase.internal.TransactionFields.LOG;
import static dev.consistencykit.twophase.internal.TransactionFields.OWNER;
import static dev.consistencykit.twophase.internal.TransactionFields.PARTICIPANTS;
import static dev.consistencykit.twophase.internal.TransactionFields.P_COLLECTION;
import static dev.consistencykit.twophase.internal.TransactionFields.P_COMMIT;
import static dev.consistencykit.twophase.internal.TransactionFields.P_ID;
import static dev.consistencykit.twophase.internal.TransactionFields.P_PREPARE;
import static dev.consistencykit.twophase.internal.TransactionFields.SET_ASIDE;
import static dev.consistencykit.twophase.internal.TransactionFields.STATE;
import static dev.consistencykit.twophase.internal.TransactionFields.TOKEN;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;

import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Sorts;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.KeptRecord;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.OperationView;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.core.spi.Claim;
import dev.consistencykit.core.spi.ConditionalUpdates;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.Names;
import dev.consistencykit.core.spi.OnceEffects;
import dev.consistencykit.core.spi.PatternRegistry;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.core.spi.StateSnapshot;
import dev.consistencykit.core.spi.PatternInspection;
import dev.consistencykit.core.spi.PatternRecovery;
import dev.consistencykit.core.spi.PatternSetup;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.twophase.ConsistentRead;
import dev.consistencykit.twophase.SettledRead;
import dev.consistencykit.twophase.TransactionState;
import dev.consistencykit.twophase.TwoPhaseAudit;
import dev.consistencykit.twophase.TwoPhaseConfig;
import dev.consistencykit.twophase.TwoPhaseListener;
import dev.consistencykit.twophase.TwoPhaseMetrics;
import dev.consistencykit.twophase.TwoPhaseTransaction;
import dev.consistencykit.twophase.internal.TransactionDriving.Outcome;
import dev.consistencykit.twophase.internal.TransactionRecording.Recorded;

/**
 * The two-phase commit state machine.
 *
 * <p><b>Protocol.</b> One atomic write records the transaction with all its participants (state {@code pending}
 * when the caller drives it, {@code initial} when a worker will). Prepare runs the {@link OnceEffects} lifecycle:
 * it reserves every participant for this attempt (owner and fencing token; one unordered bulk write per collection,
 * capped per document), reads the transaction back to check that it is still pending under this attempt's token,
 * and only then applies each participant's prepare update under that attempt's own reservation, guarded by its
 * precondition (one bulk per collection). The decision is one compare-and-set of the transaction's state
 * ({@code pending → applied} or {@code pending → canceling}) carrying the owner's fencing token, so commit and
 * rollback can never both win. Settling applies the commit (or rollback) update to each participant the prepare
 * was applied to and removes the mark in the same write; a rollback first releases every reservation, so no prepare
 * can land after it. Nothing is left on a participant once it has settled: its overhead is the transactions in
 * flight on it.
 *
 * <p><b>Ownership.</b> Whoever drives a transaction holds its current fencing token; every state change carries
 * it. Recovery takes a transaction over by incrementing the token in a compare-and-set on the token it read, so
 * two recoverers never both take one, and the former owner's next state change fails: it then reports what the
 * transaction became. A paused owner that wakes however late cannot apply: its reservation was consumed, released or
 * taken over, and a reservation it sends late is followed by the ownership check, which fails.
 *
 * <p>An uncontended transfer costs seven round trips: record, reserve (one bulk), check, prepare (one bulk), decide,
 * settle (one bulk), finish.
 */
public final class TransactionEngine implements PatternSetup, PatternRecovery, PatternInspection<TwoPhaseMetrics> {

    /** The reason codes a canceled transaction's record stores, in {@code CancellationReason} order. */
    public static final List<String> REASON_CODES = List.of(TransactionFields.INSUFFICIENT_FUNDS,
            TransactionFields.PARTICIPANT_MISSING, TransactionFields.PRECONDITION_FAILED,
            TransactionFields.TOO_MANY_PENDING, TransactionFields.PARTICIPANT_REJECTED, TransactionFields.STALE,
            TransactionFields.OVERFLOW);

    /** A validated transaction, in its stored form. */
    public record Encoded(Object id, String label, List<Document> participants, String spec) {

        OperationId operationId() {
            return new OperationId(id);
        }

        /** Which documents take part, as stored for queries and inspection: {@code [{c, id}]}. */
        List<Document> index() {
            List<Document> index = new ArrayList<>();
            for (Document p : participants) {
                index.add(new Document(P_COLLECTION, p.get(P_COLLECTION)).append(P_ID, p.get(P_ID)));
            }
            return index;
        }
    }

    private final TransactionFields fields;
    private final TransactionCodec encoding;
    private final TransactionRecording recording;
    private final TransactionParticipants participants;
    private final TransactionSettlement settlement;
    private final TransactionDriving driving;
    private final TransactionRecovery recovery;
    private final ServerReplay replay;
    private final ConsistentReader reader;

    /**
     * The engine over {@code database} (already checked for an acknowledged write concern): the shared fields, the
     * encoding of a transaction, the store of its record, its participants' reservations, the settlement of its
     * commit or rollback, the driver of its state machine, recovery, and the consistent reader.
     */
    public TransactionEngine(TwoPhaseConfig config, MongoDatabase database, ServerClock clock,
                             TwoPhaseListener listener, Supplier<String> ownerIds) {
        this.fields = new TransactionFields(config, database, clock, listener, ownerIds);
        this.encoding = new TransactionCodec(fields);
        this.recording = new TransactionRecording(fields);
        this.participants = new TransactionParticipants(fields, recording);
        this.settlement = new TransactionSettlement(fields, participants);
        this.driving = new TransactionDriving(fields, recording, participants, settlement);
        this.recovery = new TransactionRecovery(fields, recording, participants, driving);
        this.replay = new ServerReplay(fields.database.getCollection(
                ServerReplay.scratchName(config.transactionsCollection()), BsonDocument.class));
        this.reader = new ConsistentReader(fields.database, config.transactionsCollection(), fields.marker, replay);
    }

    /** The database's codec registry: user values are encoded and checked with it. */
    public CodecRegistry registry() {
        return fields.registry();
    }

    /** Validates {@code tx} and encodes it in its stored form; nothing is sent. */
    public Encoded encode(TwoPhaseTransaction tx, Map<Integer, String> fundsPaths) {
        return encoding.encode(tx, fundsPaths);
    }

    /** Takes over and finishes every transaction left unfinished longer than {@code staleAfter}. */
    @Override
    public RecoveryReport recover(Duration staleAfter) {
        return recovery.recover(staleAfter);
    }

    /** {@link #recover(Duration)} for the transaction {@code id} alone. */
    @Override
    public RecoveryReport recoverOne(Object id, Duration staleAfter) {
        return recovery.recover(staleAfter, id);
    }

    /**
     * The transaction {@code id} and its participants as {@link #readConsistent} shows them (as stored, with a note,
     * when that read cannot place a transaction in flight on them).
     */
    @Override
    public Optional<OperationView> describe(Object id) {
        Document tx = fields.transactions.find(eq("_id", id)).first();
        if (tx == null) {
            return Optional.empty();
        }
        Map<String, List<Object>> byCollection = new java.util.LinkedHashMap<>();
        for (Document p : tx.getList(PARTICIPANTS, Document.class, List.of())) {
            if (p.get(P_COLLECTION) instanceof String c && Names.isCollectionName(c)
                    && Ids.isDocumentId(p.get(P_ID))) {
                byCollection.computeIfAbsent(c, k -> new ArrayList<>()).add(p.get(P_ID));
            }
        }
        List<OperationView.Touched> touched = new ArrayList<>();
        byCollection.forEach((collection, ids) -> {
            ConsistentRead read = reader.read(collection, ids);
            Map<Object, Document> seen = new HashMap<>();
            String note = "as readConsistent shows it";
            if (read.isResolved()) {
                read.documents().forEach(d -> seen.put(Ids.idKey(d.get("_id")), d));
            } else {
                note = "as stored: readConsistent could not place transactions " + read.unresolved();
                fields.database.getCollection(collection).find(in("_id", ids))
                        .forEach(d -> seen.put(Ids.idKey(d.get("_id")), d));
            }
            for (Object participant : ids) {
                touched.add(new OperationView.Touched(collection, participant, seen.get(Ids.idKey(participant)), note));
            }
        });
        return Optional.of(new OperationView(id, String.valueOf(tx.get(STATE)), tx, touched));
    }

    /** Transactions done or canceled within the window, by the {@code state_lastModified} index. */
    @Override
    public java.util.OptionalLong finishedSince(Duration window, int cap) {
        return java.util.OptionalLong.of(fields.transactions.countDocuments(and(in(STATE, List.of(
                TransactionState.DONE.stored(), TransactionState.CANCELED.stored())), Filters.gt(LAST_MODIFIED,
                fields.clock.cutoff(window))), new com.mongodb.client.model.CountOptions().limit(cap)));
    }

    // ---------------------------------------------------------------- the entry points

    /** Records {@code tx} in {@code initial} for a worker to run. */
    public OperationId submit(Encoded tx) {
        recording.record(tx, TransactionState.INITIAL, null);
        return tx.operationId();
    }

    /** Records {@code tx} and drives it to a terminal state in this thread. */
    public OperationResult apply(Encoded tx) {
        String owner = fields.ownerIds.get();
        Recorded recorded = recording.record(tx, TransactionState.PENDING, owner);
        Outcome outcome;
        if (recorded.inserted()) {
            outcome = driving.drive(tx, TransactionState.PENDING, owner, 1L, false);
        } else {
            outcome = resume(tx, recorded.existing(), owner);
        }
        return driving.toResult(tx, outcome, true);
    }

    /** Drives a transaction that already existed when {@code apply()} recorded it. */
    Outcome resume(Encoded tx, Document existing, String owner) {
        TransactionState state = TransactionState.fromStored(existing.getString(STATE));
        if (state.isTerminal()) {
            return Outcome.of(state, existing);
        }
        if (owner.equals(existing.getString(OWNER))) {
            // our own record: the write applied but its acknowledgement was lost, and the retry found it
            return driving.drive(tx, state, owner, existing.getLong(TOKEN), false);
        }
        Date lease = existing.getDate(LEASE);
        boolean claimable = state == TransactionState.INITIAL || lease == null
                || !lease.toInstant().isAfter(fields.clock.now());
        if (!claimable) {
            return Outcome.inFlight(state);
        }
        Optional<Document> claimed = recovery.takeOver(existing, owner);
        if (claimed.isEmpty()) {
            Document now = recording.readPrimary(tx.id());
            return now == null ? Outcome.inFlight(state) : Outcome.of(TransactionState.fromStored(
                    now.getString(STATE)), now);
        }
        Document doc = claimed.get();
        return driving.drive(tx, TransactionState.fromStored(doc.getString(STATE)), owner, doc.getLong(TOKEN), false);
    }

    /**
     * Claims the oldest {@code initial} transaction and drives it. Cancellations are returned as aborted results,
     * not thrown.
     */
    public Optional<OperationResult> processNext() {
        String owner = fields.ownerIds.get();
        boolean[] sent = {false};
        Document claimed = fields.config.retryPolicy().execute(fields.config.name(), null, "claim next transaction",
                () -> {
            // a retry looks first for what its earlier attempt claimed: its reply may have been lost, and the
            // transaction would stay claimed by this owner, driven by no one, until it went stale
            Document mine = sent[0] ? ConditionalUpdates.heldBy(fields.transactions, eq(STATE,
                    TransactionState.PENDING.stored()), owner, tokenFields()).map(Claim::document).orElse(null) : null;
            sent[0] = true;
            return mine != null ? mine : fields.transactions.findOneAndUpdate(eq(STATE, TransactionState.INITIAL
                    .stored()),
                    fields.claimUpdate(owner, true), new FindOneAndUpdateOptions().sort(Sorts.ascending(LAST_MODIFIED))
                            .returnDocument(ReturnDocument.AFTER).upsert(false));
        });
        if (claimed == null) {
            return Optional.empty();
        }
        Encoded tx = decode(claimed);
        Outcome outcome = driving.drive(tx, TransactionState.PENDING, owner, claimed.getLong(TOKEN), false);
        return Optional.of(driving.toResult(tx, outcome, false));
    }

    // ---------------------------------------------------------------- status, pruning, reads, indexes

    /** In-flight transactions not modified for {@code staleAfter}, oldest first. */
    @Override
    public List<InterruptedOperation> interrupted(Duration staleAfter, int limit) {
        List<InterruptedOperation> out = new ArrayList<>();
        for (Document tx : fields.transactions.find(and(in(STATE, IN_FLIGHT), lte(LAST_MODIFIED, fields.clock
                .cutoff(staleAfter))))
                .projection(Projections.include(STATE, LAST_MODIFIED, PARTICIPANTS, SET_ASIDE))
                .sort(Sorts.ascending(LAST_MODIFIED)).limit(limit)) {
            List<String> where = new ArrayList<>();
            for (Document p : tx.getList(PARTICIPANTS, Document.class, List.of())) {
                where.add(p.get(P_COLLECTION) + "/" + p.get(P_ID));
            }
            Document aside = tx.get(SET_ASIDE) instanceof Document d ? d : null;
            out.add(new InterruptedOperation(tx.get("_id"), tx.getString(STATE),
                    fields.clock.ageOf(tx.getDate(LAST_MODIFIED).toInstant()), "participants " + where
                    + (aside == null ? "" : "; set aside by recovery: " + aside.get("reason"))));
        }
        return out;
    }

    /** Counts per state and the oldest in-flight age, from one snapshot ({@link StateSnapshot}). */
    @Override
    public StrategyStatus status() {
        StateSnapshot snapshot = StateSnapshot.of(fields.transactions, STATE, LAST_MODIFIED);
        Optional<Duration> age = snapshot.oldestOf(IN_FLIGHT).map(fields.clock::ageOf);
        return new StrategyStatus(fields.config.name(), snapshot.counts(), snapshot.sum(IN_FLIGHT), age);
    }

    /**
     * What compaction removes from a held terminal transaction: all but its id, state, reason, last change and hold,
     * which is what a late retry of its record write reads (its state and reason are its answer).
     */
    static final List<String> COMPACTED_AWAY = List.of(LABEL, PARTICIPANTS, SPEC, HISTORY, OWNER, LEASE, TOKEN,
            CREATED, LAST_ERROR, SET_ASIDE);

    /** Held records older than {@code olderThan}: see {@link RecordReleases#kept}. */
    @Override
    public List<KeptRecord> kept(Duration olderThan, int limit) {
        return RecordReleases.kept(fields.transactions, LAST_MODIFIED, fields.clock, fields.clock.cutoff(olderThan),
                limit);
    }

    /** Releases the records this instance wrote and still holds. */
    @Override
    public void close() {
        fields.releases.flush();
    }

    /**
     * Deletes terminal transactions older than {@code retention} that their recorders released, and compacts those
     * still held ({@link RecordReleases#compact}): two writes.
     */
    public int prune(Duration retention) {
        Objects.requireNonNull(retention, "retention");
        fields.releases.flush();
        Date cutoff = fields.clock.cutoff(retention);
        List<String> terminal = List.of(TransactionState.DONE.stored(), TransactionState.CANCELED.stored());
        // a record its recorder has not released may still be written again by that recorder's retry: kept
        int count = (int) (long) fields.config.retryPolicy().execute(fields.config.name(), null, "prune transactions",
                () -> fields.transactions.deleteMany(and(in(STATE, terminal), lte(LAST_MODIFIED, cutoff),
                        RecordReleases.released())).getDeletedCount());
        fields.pruned.add(count);
        if (count > 0) {
            LOG.info("[{}] pruned {} terminal transactions older than {}", fields.config.name(), count, retention);
        }
        // held records past their retention keep only what a late retry of their record write reads
        long compacted = fields.config.retryPolicy().execute(fields.config.name(), null, "compact held transactions",
                () -> RecordReleases.compact(fields.transactions, and(in(STATE, terminal), lte(LAST_MODIFIED, cutoff)),
                        List.of(RecordReleases.FIELD), COMPACTED_AWAY));
        if (compacted > 0) {
            LOG.info("[{}] compacted {} terminal transactions past their retention that their writers still hold",
                    fields.config.name(), compacted);
        }
        // copies a consistent read left when it died mid-replay: garbage, never evidence
        fields.config.retryPolicy().execute(fields.config.name(), null, "prune replay copies",
                () -> replay.sweep(fields.clock.cutoff(ServerReplay.ABANDONED_AFTER)));
        return count;
    }

    /** See {@link dev.consistencykit.twophase.TwoPhaseCommit#readConsistent}. */
    public ConsistentRead readConsistent(String collectionName, List<?> ids) {
        return reader.read(collectionName, checkedIds(collectionName, ids));
    }

    private List<Object> checkedIds(String collectionName, List<?> ids) {
        Names.fieldName(fields.config.name(), "collection", collectionName);
        Objects.requireNonNull(ids, "ids");
        List<Object> checked = new ArrayList<>();
        for (int i = 0; i < ids.size(); i++) {
            checked.add(Ids.documentId(fields.config.name(), "ids[" + i + "]", ids.get(i), registry()));
        }
        return checked;
    }

    /** See {@link dev.consistencykit.twophase.TwoPhaseCommit#readSettled}. */
    public SettledRead readSettled(String collectionName, List<?> ids, Duration maxWait) {
        ids = checkedIds(collectionName, ids);
        Objects.requireNonNull(maxWait, "maxWait");
        MongoCollection<Document> collection = fields.database.getCollection(collectionName)
                .withReadPreference(ReadPreference.primary());
        Instant deadline = Instant.now().plus(maxWait);
        long backoff = 1;
        List<Object> pending = List.of();
        while (true) {
            // every read is bounded by what is left of maxWait, so a hung server cannot hold the caller longer
            // and by the instance's operation timeout, whichever ends first
            long left = Math.max(1, Duration.between(Instant.now(), deadline).toMillis());
            Long own = collection.getTimeout(TimeUnit.MILLISECONDS);
            boolean boundByWait = own == null || own == 0 || left <= own;
            MongoCollection<Document> bounded = collection.withTimeout(boundByWait ? left : own,
                    TimeUnit.MILLISECONDS);
            try {
                List<Document> first = readOrdered(bounded, ids);
                pending = pendingOn(first);
                if (pending.isEmpty()) {
                    List<Document> second = readOrdered(bounded, ids);
                    if (second.equals(first)) {
                        return new SettledRead(second, List.of());
                    }
                    pending = pendingOn(second);
                }
            } catch (MongoOperationTimeoutException e) {
                if (!boundByWait) {
                    throw e;   // the instance's own operation timeout, not maxWait: the server is slow or gone
                }
                // maxWait ran out during a read: not settled within the wait, which is an answer, not a failure
                return new SettledRead(List.of(), pending.isEmpty() ? List.of("(changing)") : pending);
            }
            if (!Instant.now().plusMillis(backoff).isBefore(deadline)) {
                return new SettledRead(List.of(), pending.isEmpty() ? List.of("(changing)") : pending);
            }
            sleep(backoff);
            backoff = Math.min(backoff * 2, 50);
        }
    }

    static List<Document> readOrdered(MongoCollection<Document> collection, List<?> ids) {
        Map<Object, Document> byId = new HashMap<>();
        CodecRegistry registry = collection.getCodecRegistry();
        collection.find(in("_id", ids)).forEach(d -> byId.put(Ids.idKey(d.get("_id"), registry), d));
        List<Document> ordered = new ArrayList<>();
        for (Object id : ids) {
            Document d = byId.get(Ids.idKey(id, registry));
            if (d != null) {
                ordered.add(d);
            }
        }
        return ordered;
    }

    List<Object> pendingOn(List<Document> documents) {
        List<Object> pending = new ArrayList<>();
        for (Document d : documents) {
            pending.addAll(fields.marker.inFlight(d));
        }
        return pending;
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ConsistencyException(null, null, "interrupted while waiting for a settled read");
        }
    }

    /** See {@link dev.consistencykit.twophase.TwoPhaseCommit#audit(String)}. */
    public TwoPhaseAudit audit(String field) {
        Names.fieldPath(fields.config.name(), "field", field);
        List<String> problems = new ArrayList<>();
        List<Object> inFlight = new ArrayList<>();
        Map<String, Long> effects = new HashMap<>();
        Map<String, Map<Object, Long>> byDocument = new TreeMap<>();
        Map<String, Set<Object>> terminalByCollection = new HashMap<>();
        Set<Object> known = new HashSet<>();
        // sorted by _id: an unsorted scan of several batches may return a document twice on DocumentDB
        // (docs/servers.md), and the audit sums what it reads
        for (Document tx : fields.transactions.find().sort(Sorts.ascending("_id"))) {
            Object id = tx.get("_id");
            known.add(id);
            if (RecordReleases.isCompacted(tx)) {
                continue;   // finished and past its retention: only the evidence against a late retry is left
            }
            TransactionState state = TransactionState.fromStored(tx.getString(STATE));
            List<String> history = tx.getList(HISTORY, String.class, List.of());
            if (history.isEmpty() || !history.get(history.size() - 1).equals(state.stored())) {
                problems.add("transaction " + id + ": history " + history + " does not end in its state "
                        + state.stored());
            } else if (!history.get(0).equals(TransactionState.INITIAL.stored())
                    && !history.get(0).equals(TransactionState.PENDING.stored())) {
                problems.add("transaction " + id + ": history " + history + " starts with " + history.get(0));
            }
            for (int i = 1; i < history.size(); i++) {
                if (!TransactionState.fromStored(history.get(i - 1)).canMoveTo(
                        TransactionState.fromStored(history.get(i)))) {
                    problems.add("transaction " + id + ": illegal transition " + history.get(i - 1) + " -> "
                            + history.get(i) + " in " + history);
                }
            }
            if (!state.isTerminal()) {
                inFlight.add(id);
                continue;
            }
            for (Document p : decode(tx).participants()) {
                terminalByCollection.computeIfAbsent(p.getString(P_COLLECTION), k -> new HashSet<>()).add(id);
                if (state == TransactionState.DONE) {
                    long delta = increments(p.getList(P_PREPARE, Document.class), field)
                            + increments(p.getList(P_COMMIT, Document.class), field);
                    effects.merge(p.getString(P_COLLECTION) + "/" + p.get(P_ID), delta, Long::sum);
                    byDocument.computeIfAbsent(p.getString(P_COLLECTION), k -> new TreeMap<>(Ids.idOrder()))
                            .merge(p.get(P_ID), delta, Long::sum);
                }
            }
        }
        Set<String> collections = new HashSet<>(terminalByCollection.keySet());
        for (String name : collections) {
            for (Document d : fields.database.getCollection(name).find(Filters.or(exists(fields.config.markerField()
                    + ".0"),
                    exists(fields.config.reservationField() + ".0")))) {
                List<?> applied = Values.arrayOf(d, fields.config.markerField());
                for (Object marked : fields.marker.inFlight(d)) {
                    String what = applied.contains(marked) ? "carries" : "is reserved for";
                    if (terminalByCollection.get(name).contains(marked)) {
                        problems.add(name + "/" + d.get("_id") + " still " + what + " terminal transaction " + marked);
                    } else if (!known.contains(marked)) {
                        problems.add(name + "/" + d.get("_id") + " " + what + " unknown transaction " + marked);
                    }
                }
            }
        }
        return new TwoPhaseAudit(problems, inFlight, effects, byDocument);
    }

    static long increments(List<Document> ops, String field) {
        long sum = 0;
        for (Document op : ops) {
            if ("inc".equals(op.getString("op")) && field.equals(op.getString("path"))
                    && op.get("value") instanceof Number n) {
                sum += n.longValue();
            }
        }
        return sum;
    }

    /** Creates the indexes the queries need on a real server. */
    @Override
    public void ensureIndexes() {
        fields.transactions.createIndex(Indexes.ascending(STATE, LAST_MODIFIED), new IndexOptions()
                .name("state_lastModified"));
        fields.transactions.createIndex(Indexes.ascending(OWNER), new IndexOptions().name("owner").sparse(true));
        RecordReleases.ensureIndex(fields.transactions);
        fields.transactions.createIndex(Indexes.ascending(PARTICIPANTS + "." + P_COLLECTION),
                new IndexOptions().name("participant_collections"));
        for (String name : participants.registeredCollections()) {
            OnceEffects.ensureIndex(fields.database.getCollection(name), fields.marker);
        }
        PatternRegistry.register(fields.database, new PatternRegistry.Registration("two-phase", fields.config.name(),
                Map.of("transactions", fields.config.transactionsCollection(), "accounts", fields.config
                        .accountsCollection()),
                Map.of("balance", fields.config.balanceField(), "marker", fields.config.markerField(), "reservation",
                        fields.config.reservationField())));
    }

    /** The metrics snapshot. */
    @Override
    public TwoPhaseMetrics metrics() {
        return new TwoPhaseMetrics(fields.committed.sum(), fields.canceled.sum(), fields.recoveredForward.sum(),
                fields.recoveredBack.sum(),
                fields.leaseLost.sum(), fields.commitStuck.sum(), fields.pruned.sum());
    }

}
