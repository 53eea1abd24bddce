package dev.consistencykit.twophase.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lte;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Date;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.bson.BsonValue;
import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.MongoWriteException;
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
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.result.UpdateResult;

import dev.consistencykit.core.Checks;
import dev.consistencykit.core.ConditionalUpdates;
import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.GuardedResult;
import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.Inputs;
import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.Listeners;
import dev.consistencykit.core.EffectMarker;
import dev.consistencykit.core.MarkerWrite;
import dev.consistencykit.core.MongoErrors;
import dev.consistencykit.core.OnceEffects;
import dev.consistencykit.core.PatternRegistry;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.ReadSettings;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.core.Transition;
import dev.consistencykit.core.UpdateOutcome;
import dev.consistencykit.core.WriteConcerns;
import dev.consistencykit.twophase.CommitStuckException;
import dev.consistencykit.twophase.InsufficientFundsException;
import dev.consistencykit.twophase.Participant;
import dev.consistencykit.twophase.ParticipantMissingException;
import dev.consistencykit.twophase.ParticipantRejectedException;
import dev.consistencykit.twophase.PreconditionFailedException;
import dev.consistencykit.twophase.SettledRead;
import dev.consistencykit.twophase.StalePendingPolicy;
import dev.consistencykit.twophase.TooManyPendingTransactionsException;
import dev.consistencykit.twophase.TransactionCanceledException;
import dev.consistencykit.twophase.TransactionState;
import dev.consistencykit.twophase.TwoPhaseAudit;
import dev.consistencykit.twophase.TwoPhaseConfig;
import dev.consistencykit.twophase.TwoPhaseListener;
import dev.consistencykit.twophase.TwoPhaseMetrics;
import dev.consistencykit.twophase.TwoPhaseTransaction;

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
public final class TransactionEngine {

    private static final Logger LOG = LoggerFactory.getLogger(TransactionEngine.class);

    // transaction document fields
    static final String STATE = "state";
    static final String LABEL = "label";
    static final String PARTICIPANTS = "participants";
    static final String SPEC = "spec";
    static final String HISTORY = "history";
    static final String OWNER = "owner";
    static final String LEASE = "leaseExpiresAt";
    static final String TOKEN = "fencingToken";
    static final String LAST_MODIFIED = Transition.DEFAULT_LAST_MODIFIED_FIELD;
    static final String CREATED = "createdAt";
    static final String REASON = "reason";
    static final String LAST_ERROR = "lastError";
    // participant entry fields
    static final String P_COLLECTION = "c";
    static final String P_ID = "id";
    static final String P_PRE = "pre";
    static final String P_PREPARE = "prepare";
    static final String P_COMMIT = "commit";
    static final String P_ROLLBACK = "rollback";
    static final String P_FUNDS = "funds";

    /** Reason codes stored on canceled transactions: {@link dev.consistencykit.twophase.CancellationReason}'s names. */
    public static final String INSUFFICIENT_FUNDS = "INSUFFICIENT_FUNDS";
    public static final String PARTICIPANT_MISSING = "PARTICIPANT_MISSING";
    public static final String PRECONDITION_FAILED = "PRECONDITION_FAILED";
    public static final String TOO_MANY_PENDING = "TOO_MANY_PENDING";
    public static final String PARTICIPANT_REJECTED = "PARTICIPANT_REJECTED";
    public static final String STALE = "STALE";

    private static final Set<String> CALLER_REASONS = Set.of(INSUFFICIENT_FUNDS, PARTICIPANT_MISSING,
            PRECONDITION_FAILED, TOO_MANY_PENDING, PARTICIPANT_REJECTED);
    private static final List<String> IN_FLIGHT = TransactionState.IN_FLIGHT.stream().map(TransactionState::stored)
            .sorted().toList();
    private static final int RECOVERY_BATCH = 100;

    private final TwoPhaseConfig config;
    private final MongoDatabase database;
    private final MongoCollection<Document> transactions;
    private final EffectMarker marker;
    private final ServerClock clock;
    private final TwoPhaseListener listener;
    private final Supplier<String> ownerIds;
    private final SpecCodec codec;
    private final Map<String, MongoCollection<Document>> participantCollections = new ConcurrentHashMap<>();

    private final LongAdder committed = new LongAdder();
    private final LongAdder canceled = new LongAdder();
    private final LongAdder recoveredForward = new LongAdder();
    private final LongAdder recoveredBack = new LongAdder();
    private final LongAdder leaseLost = new LongAdder();
    private final LongAdder commitStuck = new LongAdder();
    private final LongAdder pruned = new LongAdder();

    /**
     * @param config    validated settings
     * @param database  the application's database, acknowledged writes
     * @param clock     server time
     * @param listener  hooks
     * @param ownerIds  unique owner names, one per drive
     */
    public TransactionEngine(TwoPhaseConfig config, MongoDatabase database, ServerClock clock,
                             TwoPhaseListener listener, Supplier<String> ownerIds) {
        database = ReadSettings.ownReads(database);
        this.config = config;
        this.database = database;
        this.transactions = database.getCollection(config.transactionsCollection());
        this.marker = new EffectMarker(config.reservationField(), config.markerField(),
                List.of(config.tombstoneField()));
        this.clock = clock;
        this.listener = listener;
        this.ownerIds = ownerIds;
        this.codec = new SpecCodec(config.name(), Set.of(config.markerField(),
                config.reservationField(), config.tombstoneField()), database.getCodecRegistry());
    }

    /** The database's codec registry: user values are encoded and checked with it. */
    public CodecRegistry registry() {
        return database.getCodecRegistry();
    }

    // ---- encoding and validation ----------------------------------------------------------------------------

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

    private static final JsonWriterSettings SPEC_JSON = JsonWriterSettings.builder().outputMode(JsonMode.EXTENDED)
            .build();

    /**
     * The full participant specs, stored as one canonical extended-JSON string: a string is far cheaper for the server
     * to copy on every state change than a tree of small documents, stays readable, and replays exactly (extended
     * JSON keeps every BSON type). Equal transactions render equal strings.
     */
    private static String spec(String label, List<Document> participants) {
        return new Document(LABEL, label).append(PARTICIPANTS, participants).toJson(SPEC_JSON);
    }

    /**
     * Validates {@code tx} and renders it in stored form; nothing is written.
     *
     * @param fundsPaths for each participant index, the field whose unmet condition means insufficient funds
     */
    public Encoded encode(TwoPhaseTransaction tx, Map<Integer, String> fundsPaths) {
        Object id = Inputs.operationId(config.name(), "transaction id", tx.id().value());
        if (tx.participants().isEmpty()) {
            throw new InvalidInputException(config.name(), "participants", "participants must not be empty: a"
                    + " transaction needs at least one participant");
        }
        Set<List<Object>> seen = new HashSet<>();
        List<Document> participants = new ArrayList<>();
        for (int i = 0; i < tx.participants().size(); i++) {
            Participant p = tx.participants().get(i);
            String where = "participants[" + i + "]";
            Inputs.fieldName(config.name(), where + ".collection", p.collection());
            Object docId = Inputs.documentId(config.name(), where + ".documentId", p.documentId(), registry());
            if (p.collection().equals(config.transactionsCollection())) {
                throw new InvalidInputException(config.name(), where + ".collection", where
                        + " must not be the transactions collection '" + p.collection() + "'");
            }
            if (!seen.add(List.of(p.collection(), Inputs.idKey(docId, registry())))) {
                throw new InvalidInputException(config.name(), where, where + " names document " + p
                        + " a second time; a document takes part in a transaction once");
            }
            Document entry = new Document(P_COLLECTION, p.collection()).append(P_ID, docId)
                    .append(P_PRE, codec.encodeCondition(where + ".precondition", p.precondition()))
                    .append(P_PREPARE, codec.encodeUpdate(where + ".prepare", p.prepare()))
                    .append(P_COMMIT, codec.encodeUpdate(where + ".commit", p.commit()))
                    .append(P_ROLLBACK, codec.encodeUpdate(where + ".rollback", p.rollback()));
            String funds = fundsPaths.get(i);
            if (funds != null) {
                entry.append(P_FUNDS, funds);
            }
            participants.add(entry);
        }
        Inputs.fieldName(config.name(), "label", tx.label());
        return new Encoded(id, tx.label(), participants, spec(tx.label(), participants));
    }

    private static Encoded decode(Document tx) {
        String spec = tx.getString(SPEC);
        List<Document> participants = spec == null ? List.of()
                : Document.parse(spec).getList(PARTICIPANTS, Document.class);
        return new Encoded(tx.get("_id"), tx.getString(LABEL), participants, spec);
    }

    // ---- recording the intent -------------------------------------------------------------------------------

    private record Recorded(boolean inserted, Document existing) {
    }

    /**
     * Records {@code tx} with one upsert whose filter never matches an existing document, so a reused id is a
     * duplicate-key error rather than a change to the existing transaction.
     */
    private Recorded record(Encoded tx, TransactionState state, String owner) {
        Document fields = new Document(STATE, state.stored()).append(LABEL, tx.label())
                .append(PARTICIPANTS, tx.index()).append(SPEC, tx.spec()).append(HISTORY, List.of(state.stored()))
                .append(TOKEN, owner == null ? 0L : 1L);
        if (owner != null) {
            fields.append(OWNER, owner).append(LEASE, leaseExpiry());
        }
        Bson update = Updates.combine(Updates.setOnInsert(fields), Updates.currentDate(CREATED),
                Updates.currentDate(LAST_MODIFIED));
        Document existing = config.retryPolicy().execute(config.name(), tx.id(), "record transaction", () -> {
            try {
                UpdateResult r = transactions.updateOne(and(eq("_id", tx.id()), exists(STATE, false)), update,
                        new UpdateOptions().upsert(true));
                if (r.getUpsertedId() != null) {
                    return null;
                }
                throw new ConsistencyException(config.name(), tx.id(), "recording the transaction matched an"
                        + " existing document without a state; the transactions collection holds foreign data");
            } catch (MongoException e) {
                if (!MongoErrors.isDuplicateKey(e)) {
                    throw e;
                }
                return readPrimary(tx.id());
            }
        });
        if (existing == null) {
            return new Recorded(true, null);
        }
        // found rather than written (perhaps by this call's attempt whose acknowledgement failed): confirm the write
        // concern before going on from it
        config.retryPolicy().run(config.name(), tx.id(), "confirm record",
                () -> WriteConcerns.confirm(transactions, tx.id(), config.name(), "record transaction"));
        if (!tx.spec().equals(existing.getString(SPEC))) {
            throw new IdempotencyConflictException(config.name(), tx.id(), "transaction id " + tx.id()
                    + " is already used by a transaction with other participants; nothing was written");
        }
        return new Recorded(false, existing);
    }

    private Document readPrimary(Object id) {
        return transactions.withReadPreference(ReadPreference.primary()).find(eq("_id", id)).first();
    }

    private Date leaseExpiry() {
        return Date.from(clock.now().plus(config.lease()));
    }

    // ---- the entry points -----------------------------------------------------------------------------------

    /** Records {@code tx} in {@code initial} for a worker to run. */
    public OperationId submit(Encoded tx) {
        record(tx, TransactionState.INITIAL, null);
        return tx.operationId();
    }

    /** Records {@code tx} and drives it to a terminal state in this thread. */
    public OperationResult apply(Encoded tx) {
        String owner = ownerIds.get();
        Recorded recorded = record(tx, TransactionState.PENDING, owner);
        Outcome outcome;
        if (recorded.inserted()) {
            outcome = drive(tx, TransactionState.PENDING, owner, 1L, false);
        } else {
            outcome = resume(tx, recorded.existing(), owner);
        }
        return toResult(tx, outcome, true);
    }

    /** Drives a transaction that already existed when {@code apply()} recorded it. */
    private Outcome resume(Encoded tx, Document existing, String owner) {
        TransactionState state = TransactionState.fromStored(existing.getString(STATE));
        if (state.isTerminal()) {
            return Outcome.of(state, existing);
        }
        if (owner.equals(existing.getString(OWNER))) {
            // our own record: the write applied but its acknowledgement was lost, and the retry found it
            return drive(tx, state, owner, existing.getLong(TOKEN), false);
        }
        Date lease = existing.getDate(LEASE);
        boolean claimable = state == TransactionState.INITIAL || lease == null
                || !lease.toInstant().isAfter(clock.now());
        if (!claimable) {
            return Outcome.inFlight(state);
        }
        Optional<Document> claimed = takeOver(existing, owner);
        if (claimed.isEmpty()) {
            Document now = readPrimary(tx.id());
            return now == null ? Outcome.inFlight(state) : Outcome.of(TransactionState.fromStored(
                    now.getString(STATE)), now);
        }
        Document doc = claimed.get();
        return drive(tx, TransactionState.fromStored(doc.getString(STATE)), owner, doc.getLong(TOKEN), false);
    }

    /**
     * Claims the oldest {@code initial} transaction and drives it. Cancellations are returned as aborted results,
     * not thrown.
     */
    public Optional<OperationResult> processNext() {
        String owner = ownerIds.get();
        Document claimed = config.retryPolicy().execute(config.name(), null, "claim next transaction",
                () -> transactions.findOneAndUpdate(eq(STATE, TransactionState.INITIAL.stored()),
                        claimUpdate(owner, true),
                        new FindOneAndUpdateOptions().sort(Sorts.ascending(LAST_MODIFIED))
                                .returnDocument(ReturnDocument.AFTER).upsert(false)));
        if (claimed == null) {
            return Optional.empty();
        }
        Encoded tx = decode(claimed);
        Outcome outcome = drive(tx, TransactionState.PENDING, owner, claimed.getLong(TOKEN), false);
        return Optional.of(toResult(tx, outcome, false));
    }

    private Bson claimUpdate(String owner, boolean fromInitial) {
        List<Bson> updates = new ArrayList<>();
        updates.add(Updates.set(OWNER, owner));
        updates.add(Updates.set(LEASE, leaseExpiry()));
        updates.add(Updates.inc(TOKEN, 1L));
        updates.add(Updates.currentDate(LAST_MODIFIED));
        if (fromInitial) {
            updates.add(Updates.set(STATE, TransactionState.PENDING.stored()));
            updates.add(Updates.push(HISTORY, TransactionState.PENDING.stored()));
        }
        return Updates.combine(updates);
    }

    /** Takes {@code seen} over by a compare-and-set on its state and fencing token; empty if another won. */
    private Optional<Document> takeOver(Document seen, String owner) {
        boolean initial = TransactionState.INITIAL.stored().equals(seen.getString(STATE));
        Bson filter = and(eq("_id", seen.get("_id")), eq(STATE, seen.getString(STATE)),
                eq(TOKEN, seen.get(TOKEN)));
        Document claimed = config.retryPolicy().execute(config.name(), seen.get("_id"), "take over transaction",
                () -> transactions.findOneAndUpdate(filter, claimUpdate(owner, initial),
                        new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER).upsert(false)));
        if (claimed == null) {
            // a retried claim whose first attempt applied finds the token moved on: ours if the owner is ours
            Document now = readPrimary(seen.get("_id"));
            if (now != null && owner.equals(now.getString(OWNER))) {
                return Optional.of(now);
            }
            return Optional.empty();
        }
        return Optional.of(claimed);
    }

    // ---- driving --------------------------------------------------------------------------------------------

    /** Where a drive ended. */
    record Outcome(TransactionState state, boolean lost, Document reason, boolean stillOurs) {

        static Outcome of(TransactionState state, Document tx) {
            return new Outcome(state, false, tx == null ? null : tx.get(REASON, Document.class), false);
        }

        static Outcome inFlight(TransactionState state) {
            return new Outcome(state, true, null, false);
        }
    }

    /** Thrown inside a drive when the fencing token moved on: another process owns the transaction now. */
    private static final class LostOwnership extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final transient Document current;

        LostOwnership(Document current) {
            super(null, null, false, false);
            this.current = current;
        }
    }

    private Outcome drive(Encoded tx, TransactionState start, String owner, long token, boolean rollBackPending) {
        for (int round = 1; ; round++) {
            Outcome outcome = driveOnce(tx, start, owner, token, rollBackPending);
            if (!outcome.stillOurs() || round >= 5) {
                return outcome;
            }
            // a step found this attempt's evidence gone while the record still names it: an owner taken over earlier,
            // not yet aware of it, moved what it touched; the record says this attempt owns it, so drive on from there
            LOG.debug("[{}] transaction {}: still ours after a lost step, driving on from {}", config.name(), tx.id(),
                    outcome.state());
            start = outcome.state();
        }
    }

    private Outcome driveOnce(Encoded tx, TransactionState start, String owner, long token,
                              boolean rollBackPending) {
        TransactionState state = start;
        try {
            while (true) {
                switch (state) {
                    case INITIAL, PENDING -> {
                        if (rollBackPending) {
                            state = decide(tx, owner, token, TransactionState.CANCELING, reason(STALE, null,
                                    "recovered after going stale in pending"));
                            break;
                        }
                        Prepared prepared = prepareAll(tx, owner, token, nonce(owner, token));
                        if (prepared.lost()) {
                            releaseOwn(tx, nonce(owner, token));
                            Document now = readPrimary(tx.id());
                            throw new LostOwnership(now);
                        }
                        state = prepared.failure() == null ? decide(tx, owner, token, TransactionState.APPLIED, null)
                                : decide(tx, owner, token, TransactionState.CANCELING, prepared.failure());
                    }
                    case APPLIED -> {
                        commitAll(tx, token);
                        state = finish(tx, owner, token, TransactionState.APPLIED, TransactionState.DONE);
                    }
                    case CANCELING -> {
                        rollbackAll(tx);
                        state = finish(tx, owner, token, TransactionState.CANCELING, TransactionState.CANCELED);
                    }
                    case DONE -> {
                        committed.increment();
                        notify(() -> listener.onCommitted(tx.operationId()));
                        return new Outcome(TransactionState.DONE, false, null, false);
                    }
                    case CANCELED -> {
                        Document done = readPrimary(tx.id());
                        Document reason = done == null ? null : done.get(REASON, Document.class);
                        canceled.increment();
                        String code = reason == null ? null : reason.getString("code");
                        notify(() -> listener.onCanceled(tx.operationId(), code));
                        return new Outcome(TransactionState.CANCELED, false, reason, false);
                    }
                    default -> throw new IllegalStateException("unknown state " + state);
                }
            }
        } catch (LostOwnership lost) {
            leaseLost.increment();
            notify(() -> listener.onLeaseLost(tx.operationId()));
            Document now = lost.current;
            if (now == null) {
                return Outcome.inFlight(state);
            }
            TransactionState current = TransactionState.fromStored(now.getString(STATE));
            if (!current.isTerminal() && owner.equals(now.getString(OWNER))
                    && Objects.equals(now.get(TOKEN), token)) {
                return new Outcome(current, true, null, true);
            }
            LOG.debug("[{}] transaction {} taken over by {}, now {}", config.name(), tx.id(), now.get(OWNER),
                    current);
            return current.isTerminal() ? Outcome.of(current, now) : Outcome.inFlight(current);
        }
    }

    private static Document reason(String code, String participant, String message) {
        Document reason = new Document("code", code).append("message", message);
        if (participant != null) {
            reason.append("participant", participant);
        }
        return reason;
    }

    /** The decision: one fenced compare-and-set from {@code pending}. */
    private TransactionState decide(Encoded tx, String owner, long token, TransactionState to, Document reason) {
        Bson extra = reason == null ? null : Updates.set(REASON, reason);
        return move(tx, owner, token, TransactionState.PENDING, to, extra);
    }

    private TransactionState finish(Encoded tx, String owner, long token, TransactionState from,
                                    TransactionState to) {
        return move(tx, owner, token, from, to, null);
    }

    /**
     * A state change carrying this drive's owner and fencing token: the token orders owners of one transaction, the
     * owner (unique per drive) tells two transactions apart that were recorded under the same id, one after the
     * other was pruned, whose tokens both start at 1.
     */
    private TransactionState move(Encoded tx, String owner, long token, TransactionState from, TransactionState to,
                                  Bson extra) {
        List<Bson> updates = new ArrayList<>();
        updates.add(Updates.push(HISTORY, to.stored()));
        updates.add(Updates.set(LEASE, leaseExpiry()));
        if (extra != null) {
            updates.add(extra);
        }
        Transition transition = Transition.of(STATE, from.stored(), to.stored())
                .guardedBy(and(eq(TOKEN, token), eq(OWNER, owner)))
                .alsoUpdating(Updates.combine(updates)).returningNothing();
        GuardedResult result = config.retryPolicy().execute(config.name(), tx.id(), from.stored() + " -> "
                + to.stored(), () -> ConditionalUpdates.transition(transactions, tx.id(), transition));
        Document doc = result.document().orElse(null);
        switch (result.outcome()) {
            case APPLIED:
                LOG.debug("[{}] transaction {} {} -> {}", config.name(), tx.id(), from.stored(), to.stored());
                return to;
            case MISSING:
                throw new ConsistencyException(config.name(), tx.id(), "the transaction document disappeared while"
                        + " in " + from.stored());
            default:
                if (doc != null && ConditionalUpdates.tokenOf(doc, tokenFields()) == token
                        && owner.equals(doc.getString(OWNER))) {
                    // our own earlier attempt applied (its reply was lost), or we are behind our own state
                    return TransactionState.fromStored(doc.getString(STATE));
                }
                throw new LostOwnership(doc);
        }
    }

    private static dev.consistencykit.core.LeaseFields tokenFields() {
        return new dev.consistencykit.core.LeaseFields(OWNER, LEASE, TOKEN);
    }

    // ---- participants ---------------------------------------------------------------------------------------

    private record Prepared(Document failure, boolean lost) {

        static final Prepared OK = new Prepared(null, false);
        static final Prepared LOST = new Prepared(null, true);

        static Prepared failed(Document reason) {
            return new Prepared(reason, false);
        }
    }

    /** A participant collection; built once per name, since the driver builds a new object per call. */
    private MongoCollection<Document> participants(String name) {
        return participantCollections.computeIfAbsent(name, database::getCollection);
    }

    /**
     * The participant collections named by any recorded transaction (a distinct over an indexed field), and the
     * transfer preset's accounts collection.
     */
    private List<String> registeredCollections() {
        List<String> names = new ArrayList<>();
        names.add(config.accountsCollection());
        for (BsonValue value : config.retryPolicy().execute(config.name(), null, "list participant collections",
                () -> transactions.distinct(PARTICIPANTS + "." + P_COLLECTION, BsonValue.class)
                        .into(new ArrayList<>()))) {
            // read back: only a name a participant could have been given is a collection to visit
            if (value.isString() && Inputs.isCollectionName(value.asString().getValue())
                    && !names.contains(value.asString().getValue())) {
                names.add(value.asString().getValue());
            }
        }
        return names;
    }

    /**
     * Releases every reservation whose transaction is no longer in flight, in every participant collection any
     * recorded transaction names. Such a reservation is left by an owner that sent it late (after its transaction was finished by
     * others) and died before its ownership check could release it; nobody can apply it, so this only tidies.
     *
     * @return reservations released
     */
    private int releaseAbandoned() {
        int released = 0;
        for (String name : registeredCollections()) {
            MongoCollection<Document> collection = database.getCollection(name);
            List<OnceEffects.Reservation> found = config.retryPolicy().execute(config.name(), null,
                    "find reservations in " + name, () -> OnceEffects.reservations(collection, marker, 1_000));
            if (found.isEmpty()) {
                continue;
            }
            Set<Object> live = new HashSet<>();
            List<Object> ops = found.stream().map(OnceEffects.Reservation::operationId).distinct().toList();
            config.retryPolicy().run(config.name(), null, "read reserved transactions", () -> transactions
                    .withReadPreference(ReadPreference.primary()).find(and(in("_id", ops), in(STATE, IN_FLIGHT)))
                    .projection(Projections.include("_id")).forEach(d -> live.add(d.get("_id"))));
            for (OnceEffects.Reservation r : found) {
                if (!live.contains(r.operationId())) {
                    long n = config.retryPolicy().execute(config.name(), r.operationId(),
                            "release abandoned reservation", () -> OnceEffects.release(collection, marker,
                                    r.operationId(), r.nonce(), List.of(r.documentId())));
                    released += (int) n;
                }
            }
        }
        if (released > 0) {
            LOG.info("[{}] recovery: released {} reservations of transactions no longer in flight", config.name(),
                    released);
        }
        return released;
    }

    private Map<String, List<Integer>> byCollection(Encoded tx) {
        Map<String, List<Integer>> groups = new LinkedHashMap<>();
        for (int i = 0; i < tx.participants().size(); i++) {
            groups.computeIfAbsent(tx.participants().get(i).getString(P_COLLECTION), k -> new ArrayList<>()).add(i);
        }
        return groups;
    }

    /** The attempt's nonce in participants' reservations: one per owner and fencing token. */
    private static String nonce(String owner, long token) {
        return OnceEffects.nonce(owner, token);
    }

    /**
     * Prepare: reserve every participant for this attempt (one bulk per collection), check that the transaction is
     * still ours and pending, then apply every prepare update under this attempt's reservation (one bulk per
     * collection). A late reservation (this owner paused before it) applies nothing and fails the check; a late apply
     * finds its reservation consumed, released or taken over.
     */
    private Prepared prepareAll(Encoded tx, String owner, long token, String nonce) {
        Map<String, List<Integer>> groups = byCollection(tx);
        Set<Object> inPlace = new HashSet<>();
        for (Map.Entry<String, List<Integer>> group : groups.entrySet()) {
            Document failure = reserveGroup(tx, group, nonce, inPlace);
            if (failure != null) {
                return Prepared.failed(failure);
            }
        }
        Document now = readPrimary(tx.id());
        if (now == null || !Objects.equals(now.get(TOKEN), token) || !owner.equals(now.getString(OWNER))
                || !TransactionState.PENDING.stored().equals(now.getString(STATE))) {
            releaseOwn(tx, nonce);
            throw new LostOwnership(now);
        }
        for (Map.Entry<String, List<Integer>> group : groups.entrySet()) {
            Prepared applied = applyGroup(tx, group, nonce, inPlace);
            if (!Prepared.OK.equals(applied)) {
                return applied;
            }
        }
        return Prepared.OK;
    }

    /** At most {@code maxPendingPerDocument} transactions reserved, and as many applied and unsettled. */
    private Bson capGuard() {
        int last = config.maxPendingPerDocument() - 1;
        return and(exists(config.reservationField() + "." + last, false), exists(config.markerField() + "." + last,
                false));
    }

    /** Reserves one collection's participants; the reason to cancel, or null. Adds the ones already applied. */
    private Document reserveGroup(Encoded tx, Map.Entry<String, List<Integer>> group, String nonce,
                                  Set<Object> inPlace) {
        MongoCollection<Document> collection = participants(group.getKey());
        List<MarkerWrite> writes = new ArrayList<>();
        for (int i : group.getValue()) {
            writes.add(new MarkerWrite(tx.participants().get(i).get(P_ID), capGuard(), null));
        }
        Map<Object, GuardedResult> results;
        try {
            results = config.retryPolicy().execute(config.name(), tx.id(), "reserve " + group.getKey(),
                    () -> OnceEffects.reserve(collection, marker, tx.id(), nonce, writes));
        } catch (MongoBulkWriteException | MongoWriteException e) {
            return rejected(tx, group, e, "reservation");
        }
        for (int i : group.getValue()) {
            Document p = tx.participants().get(i);
            Object id = p.get(P_ID);
            GuardedResult r = results.get(id);
            if (r.outcome() == UpdateOutcome.APPLIED) {
                continue;
            }
            if (r.outcome() == UpdateOutcome.MISSING) {
                return failure(p, r);
            }
            Document current = r.document().orElseThrow();
            switch (marker.evidence(current, tx.id(), nonce)) {
                case RESERVED -> {
                }
                case APPLIED -> inPlace.add(id);
                case RESERVED_BY_OTHER -> {
                    String holder = marker.reservedBy(current, tx.id());
                    if (OnceEffects.tokenOf(holder) > OnceEffects.tokenOf(nonce)) {
                        // a later owner holds it: this attempt was taken over and must not take it back
                        releaseOwn(tx, nonce);
                        throw new LostOwnership(readPrimary(tx.id()));
                    }
                    // an earlier attempt's reservation (a former owner of this transaction, or a paused owner of a
                    // pruned one under the same id): make it ours
                    GuardedResult taken = config.retryPolicy().execute(config.name(), tx.id(), "take over " + id,
                            () -> OnceEffects.takeOver(collection, marker, id, tx.id(), holder, nonce));
                    if (!taken.isInPlace()) {
                        return reserveAgain(tx, collection, p, nonce, inPlace);
                    }
                }
                case NONE -> {
                    Document reason = reserveAgain(tx, collection, p, nonce, inPlace);
                    if (reason != null) {
                        return reason;
                    }
                }
                default -> throw new IllegalStateException("unknown evidence");
            }
        }
        return null;
    }

    /**
     * The cap refused a reservation, or a reservation moved under us: remove the reservations on the document that
     * belong to transactions no longer in flight (left by an owner that died between reserving and checking), then
     * try once more.
     */
    private Document reserveAgain(Encoded tx, MongoCollection<Document> collection, Document p, String nonce,
                                  Set<Object> inPlace) {
        Object id = p.get(P_ID);
        Document current = config.retryPolicy().execute(config.name(), tx.id(), "read " + id,
                () -> collection.withReadPreference(ReadPreference.primary()).find(eq("_id", id)).first());
        if (current == null) {
            return failure(p, new GuardedResult(UpdateOutcome.MISSING, Optional.empty()));
        }
        releaseStale(collection, current);
        Map<Object, GuardedResult> again = config.retryPolicy().execute(config.name(), tx.id(), "reserve " + id,
                () -> OnceEffects.reserve(collection, marker, tx.id(), nonce,
                        List.of(new MarkerWrite(id, capGuard(), null))));
        GuardedResult r = again.get(id);
        if (r.outcome() == UpdateOutcome.APPLIED) {
            return null;
        }
        if (r.outcome() == UpdateOutcome.MISSING) {
            return failure(p, r);
        }
        EffectMarker.Evidence evidence = marker.evidence(r.document().orElseThrow(), tx.id(), nonce);
        if (evidence == EffectMarker.Evidence.RESERVED) {
            return null;
        }
        if (evidence == EffectMarker.Evidence.APPLIED) {
            inPlace.add(id);
            return null;
        }
        if (evidence == EffectMarker.Evidence.RESERVED_BY_OTHER) {
            String holder = marker.reservedBy(r.document().orElseThrow(), tx.id());
            if (OnceEffects.tokenOf(holder) > OnceEffects.tokenOf(nonce)) {
                // a later owner of this transaction is reserving at the same moment: it owns it now
                releaseOwn(tx, nonce);
                throw new LostOwnership(readPrimary(tx.id()));
            }
            // an earlier owner, taken over but not yet aware of it, moved the reservation again: take it once more
            for (int attempt = 0; attempt < 5; attempt++) {
                String from = holder;
                GuardedResult taken = config.retryPolicy().execute(config.name(), tx.id(), "take over " + id,
                        () -> OnceEffects.takeOver(collection, marker, id, tx.id(), from, nonce));
                if (taken.isInPlace()) {
                    return null;
                }
                Document now = taken.document().orElse(null);
                if (now == null) {
                    return failure(p, taken);
                }
                EffectMarker.Evidence seen = marker.evidence(now, tx.id(), nonce);
                if (seen == EffectMarker.Evidence.APPLIED) {
                    inPlace.add(id);
                    return null;
                }
                if (seen != EffectMarker.Evidence.RESERVED_BY_OTHER) {
                    break;
                }
                holder = marker.reservedBy(now, tx.id());
                if (OnceEffects.tokenOf(holder) > OnceEffects.tokenOf(nonce)) {
                    releaseOwn(tx, nonce);
                    throw new LostOwnership(readPrimary(tx.id()));
                }
            }
            releaseOwn(tx, nonce);
            throw new LostOwnership(readPrimary(tx.id()));
        }
        return failure(p, r);
    }

    /** Releases the reservations on {@code current} whose transaction is terminal or gone. */
    private void releaseStale(MongoCollection<Document> collection, Document current) {
        List<Object> reserved = new ArrayList<>();
        // read back from a document users write: only entries holding an operation id reach a filter
        if (current.get(config.reservationField()) instanceof List<?> entries) {
            for (Object e : entries) {
                if (e instanceof Document d && Inputs.isOperationId(d.get(EffectMarker.OPERATION))) {
                    reserved.add(d.get(EffectMarker.OPERATION));
                }
            }
        }
        if (reserved.isEmpty()) {
            return;
        }
        Set<Object> live = new HashSet<>();
        transactions.withReadPreference(ReadPreference.primary()).find(and(in("_id", reserved), in(STATE, IN_FLIGHT)))
                .projection(Projections.include("_id")).forEach(d -> live.add(d.get("_id")));
        for (Object op : reserved) {
            if (!live.contains(op)) {
                LOG.info("[{}] releasing {}'s reservation for transaction {}, which is no longer in flight",
                        config.name(), current.get("_id"), op);
                config.retryPolicy().run(config.name(), op, "release stale reservation",
                        () -> OnceEffects.release(collection, marker, op, null, List.of(current.get("_id"))));
            }
        }
    }

    /** Applies one collection's prepare updates under this attempt's reservations. */
    private Prepared applyGroup(Encoded tx, Map.Entry<String, List<Integer>> group, String nonce,
                                Set<Object> inPlace) {
        MongoCollection<Document> collection = participants(group.getKey());
        List<MarkerWrite> writes = new ArrayList<>();
        for (int i : group.getValue()) {
            Document p = tx.participants().get(i);
            if (!inPlace.contains(p.get(P_ID))) {
                writes.add(new MarkerWrite(p.get(P_ID), SpecCodec.decodeCondition(p.getList(P_PRE, Object.class)),
                        SpecCodec.decodeUpdate(p.getList(P_PREPARE, Object.class))));
            }
        }
        if (writes.isEmpty()) {
            return Prepared.OK;
        }
        Map<Object, GuardedResult> results;
        try {
            results = config.retryPolicy().execute(config.name(), tx.id(), "prepare " + group.getKey(),
                    () -> OnceEffects.apply(collection, marker, tx.id(), nonce, writes));
        } catch (MongoBulkWriteException | MongoWriteException e) {
            return Prepared.failed(rejected(tx, group, e, "prepare update"));
        }
        for (int i : group.getValue()) {
            Document p = tx.participants().get(i);
            GuardedResult r = results.get(p.get(P_ID));
            if (r == null || r.isInPlace()) {
                continue;
            }
            if (r.outcome() == UpdateOutcome.MISSING) {
                return Prepared.failed(failure(p, r));
            }
            if (marker.evidence(r.document().orElseThrow(), tx.id(), nonce) == EffectMarker.Evidence.RESERVED) {
                return Prepared.failed(failure(p, r));
            }
            // our reservation is gone: whoever took the transaction over consumed, released or replaced it
            return Prepared.LOST;
        }
        return Prepared.OK;
    }

    /** Best effort: removes this attempt's own reservations after it found it no longer owns the transaction. */
    private void releaseOwn(Encoded tx, String nonce) {
        for (Map.Entry<String, List<Object>> group : idsByCollection(tx.participants()).entrySet()) {
            config.retryPolicy().run(config.name(), tx.id(), "release " + group.getKey(),
                    () -> OnceEffects.release(participants(group.getKey()), marker, tx.id(), nonce, group.getValue()));
        }
    }

    private Document failure(Document p, GuardedResult r) {
        String who = p.getString(P_COLLECTION) + "/" + p.get(P_ID);
        if (r.outcome() == UpdateOutcome.MISSING) {
            return reason(PARTICIPANT_MISSING, who, "participant " + who + " does not exist");
        }
        Document current = r.document().orElseThrow();
        int reserved = Inputs.arrayOf(current, config.reservationField()).size();
        int applied = Inputs.arrayOf(current, config.markerField()).size();
        if (Math.max(reserved, applied) >= config.maxPendingPerDocument()) {
            return reason(TOO_MANY_PENDING, who, "participant " + who + " already carries "
                    + (reserved + applied) + " unsettled transactions (the cap is " + config.maxPendingPerDocument()
                    + ")");
        }
        Optional<SpecCodec.Unmet> unmet = SpecCodec.firstUnmet(p.getList(P_PRE, Object.class), current);
        String funds = p.getString(P_FUNDS);
        if (funds != null && unmet.filter(u -> u.path().equals(funds)).isPresent()) {
            return reason(INSUFFICIENT_FUNDS, who, "insufficient funds in " + who + ": "
                    + unmet.get().description());
        }
        return reason(PRECONDITION_FAILED, who, "precondition failed for " + who
                + unmet.map(u -> ": " + u.description()).orElse(""));
    }

    private Document rejected(Encoded tx, Map.Entry<String, List<Integer>> group, MongoException e, String what) {
        int index = 0;
        if (e instanceof MongoBulkWriteException be && !be.getWriteErrors().isEmpty()) {
            index = be.getWriteErrors().get(0).getIndex();
        }
        Document p = tx.participants().get(group.getValue().get(Math.min(index, group.getValue().size() - 1)));
        String who = p.getString(P_COLLECTION) + "/" + p.get(P_ID);
        LOG.warn("[{}] the server refused the {} of {} for transaction {}: {}", config.name(), what, who, tx.id(),
                e.getMessage());
        return reason(PARTICIPANT_REJECTED, who, "the server refused the " + what + " of " + who + ": "
                + e.getMessage());
    }

    private void commitAll(Encoded tx, long token) {
        for (Map.Entry<String, List<Integer>> group : byCollection(tx).entrySet()) {
            MongoCollection<Document> collection = participants(group.getKey());
            List<MarkerWrite> writes = new ArrayList<>();
            for (int i : group.getValue()) {
                Document p = tx.participants().get(i);
                writes.add(MarkerWrite.of(p.get(P_ID), SpecCodec.decodeUpdate(p.getList(P_COMMIT, Object.class))));
            }
            try {
                config.retryPolicy().execute(config.name(), tx.id(), "commit " + group.getKey(),
                        () -> OnceEffects.settle(collection, marker, tx.id(), writes));
            } catch (MongoBulkWriteException | MongoWriteException e) {
                stuck(tx, token, group.getKey(), e);
                return;
            }
        }
    }

    private void stuck(Encoded tx, long token, String collection, MongoException e) {
        commitStuck.increment();
        String error = e.getMessage();
        LOG.warn("[{}] the server refused a commit update of transaction {} on {}: {}", config.name(), tx.id(),
                collection, error);
        transactions.updateOne(and(eq("_id", tx.id()), eq(TOKEN, token)), Updates.combine(
                Updates.set(LAST_ERROR, new Document("collection", collection).append("message", error)),
                Updates.currentDate(LAST_MODIFIED)));
        notify(() -> listener.onCommitStuck(tx.operationId(), collection, error));
        throw new CommitStuckException(config.name(), tx.id(), "transaction " + tx.id() + " is committed but the"
                + " server refused a commit update on " + collection + "; recovery will retry it: " + error, e);
    }

    /**
     * Rollback: first release every reservation of the transaction (any attempt's), so that no prepare can apply
     * after this point, then settle the participants it was applied to with their rollback update.
     */
    private void rollbackAll(Encoded tx) {
        for (Map.Entry<String, List<Integer>> group : byCollection(tx).entrySet()) {
            MongoCollection<Document> collection = participants(group.getKey());
            List<Object> ids = new ArrayList<>();
            List<MarkerWrite> writes = new ArrayList<>();
            for (int i : group.getValue()) {
                Document p = tx.participants().get(i);
                ids.add(p.get(P_ID));
                writes.add(MarkerWrite.of(p.get(P_ID), SpecCodec.decodeUpdate(p.getList(P_ROLLBACK,
                        Object.class))));
            }
            config.retryPolicy().run(config.name(), tx.id(), "release " + group.getKey(),
                    () -> OnceEffects.release(collection, marker, tx.id(), null, ids));
            config.retryPolicy().execute(config.name(), tx.id(), "roll back " + group.getKey(),
                    () -> OnceEffects.settle(collection, marker, tx.id(), writes));
        }
    }

    // ---- results --------------------------------------------------------------------------------------------

    private OperationResult toResult(Encoded tx, Outcome outcome, boolean throwOnPrecondition) {
        OperationId id = tx.operationId();
        return switch (outcome.state()) {
            case DONE -> OperationResult.committed(id, TransactionState.DONE.stored());
            case CANCELED -> {
                Document reason = outcome.reason();
                String code = reason == null ? null : reason.getString("code");
                String message = reason == null ? "canceled" : reason.getString("message");
                if (throwOnPrecondition && code != null && CALLER_REASONS.contains(code)) {
                    throw canceledException(id, code, reason.getString("participant"), message);
                }
                yield OperationResult.aborted(id, TransactionState.CANCELED.stored(), message);
            }
            default -> OperationResult.inFlight(id, outcome.state().stored());
        };
    }

    private TransactionCanceledException canceledException(OperationId id, String code, String participant,
                                                           String message) {
        return switch (code) {
            case INSUFFICIENT_FUNDS -> new InsufficientFundsException(config.name(), id, code, participant, message);
            case PARTICIPANT_MISSING -> new ParticipantMissingException(config.name(), id, code, participant, message);
            case TOO_MANY_PENDING -> new TooManyPendingTransactionsException(config.name(), id, code, participant,
                    message);
            case PARTICIPANT_REJECTED -> new ParticipantRejectedException(config.name(), id, code, participant,
                    message);
            default -> new PreconditionFailedException(config.name(), id, code, participant, message);
        };
    }

    // ---- recovery -------------------------------------------------------------------------------------------

    /** Finishes or undoes every transaction without progress for {@code staleAfter}. */
    public RecoveryReport recover(Duration staleAfter) {
        Objects.requireNonNull(staleAfter, "staleAfter");
        Checks.notNegative("staleAfter", staleAfter);
        long start = System.nanoTime();
        // Zero means every transaction not terminal: a time filter would miss one stamped by the server within the
        // error of our estimate of server time.
        Bson stale = staleAfter.isZero() ? in(STATE, IN_FLIGHT)
                : and(in(STATE, IN_FLIGHT), lte(LAST_MODIFIED, clock.cutoff(staleAfter)));
        int examined = 0;
        int forward = 0;
        int back = 0;
        int skipped = 0;
        Set<Object> seen = new HashSet<>();
        while (true) {
            List<Document> batch = transactions.find(stale)
                    .projection(Projections.include(STATE, TOKEN, LAST_MODIFIED))
                    .sort(Sorts.ascending(LAST_MODIFIED)).limit(RECOVERY_BATCH).into(new ArrayList<>());
            batch.removeIf(d -> !seen.add(d.get("_id")));
            if (batch.isEmpty()) {
                break;
            }
            for (Document candidate : batch) {
                examined++;
                switch (recoverOne(candidate)) {
                    case DONE -> forward++;
                    case CANCELED -> back++;
                    default -> skipped++;
                }
            }
        }
        releaseAbandoned();
        RecoveryReport report = new RecoveryReport(config.name(), examined, forward, back, skipped,
                Duration.ofNanos(System.nanoTime() - start));
        if (examined > 0) {
            LOG.info("[{}] recovery: {} stale transactions, {} rolled forward, {} rolled back, {} left to others",
                    config.name(), examined, forward, back, skipped);
        }
        return report;
    }

    private TransactionState recoverOne(Document candidate) {
        TransactionState from = TransactionState.fromStored(candidate.getString(STATE));
        String owner = ownerIds.get();
        Optional<Document> claimed = takeOver(candidate, owner);
        if (claimed.isEmpty()) {
            return from;
        }
        Document doc = claimed.get();
        Encoded tx = decode(doc);
        TransactionState state = TransactionState.fromStored(doc.getString(STATE));
        boolean rollBack = from == TransactionState.PENDING
                && config.stalePendingPolicy() == StalePendingPolicy.ROLL_BACK;
        Outcome outcome;
        try {
            outcome = drive(tx, state, owner, doc.getLong(TOKEN), rollBack);
        } catch (CommitStuckException stuck) {
            return TransactionState.APPLIED;
        }
        if (outcome.state() == TransactionState.DONE) {
            recoveredForward.increment();
        } else if (outcome.state() == TransactionState.CANCELED) {
            recoveredBack.increment();
        }
        LOG.info("[{}] recovered transaction {}: {} -> {}", config.name(), tx.id(), from.stored(),
                outcome.state().stored());
        TransactionState end = outcome.lost() ? from : outcome.state();
        notify(() -> listener.onRecovered(tx.operationId(), from, end));
        return outcome.lost() ? from : outcome.state();
    }

    // ---- status, pruning, reads, indexes --------------------------------------------------------------------

    /** In-flight transactions not modified for {@code staleAfter}, oldest first. */
    public List<InterruptedOperation> interrupted(Duration staleAfter, int limit) {
        List<InterruptedOperation> out = new ArrayList<>();
        for (Document tx : transactions.find(and(in(STATE, IN_FLIGHT), lte(LAST_MODIFIED, clock.cutoff(staleAfter))))
                .projection(Projections.include(STATE, LAST_MODIFIED, PARTICIPANTS))
                .sort(Sorts.ascending(LAST_MODIFIED)).limit(limit)) {
            List<String> where = new ArrayList<>();
            for (Document p : tx.getList(PARTICIPANTS, Document.class, List.of())) {
                where.add(p.get(P_COLLECTION) + "/" + p.get(P_ID));
            }
            out.add(new InterruptedOperation(tx.get("_id"), tx.getString(STATE),
                    clock.ageOf(tx.getDate(LAST_MODIFIED).toInstant()), "participants " + where));
        }
        return out;
    }

    /** Counts per state and the oldest in-flight age. */
    public StrategyStatus status() {
        // one indexed count per state rather than a $group over the whole collection
        Map<String, Long> counts = new HashMap<>();
        for (TransactionState s : TransactionState.values()) {
            long n = transactions.countDocuments(eq(STATE, s.stored()));
            if (n > 0) {
                counts.put(s.stored(), n);
            }
        }
        long inFlight = IN_FLIGHT.stream().mapToLong(s -> counts.getOrDefault(s, 0L)).sum();
        Document oldest = transactions.find(in(STATE, IN_FLIGHT)).projection(Projections.include(LAST_MODIFIED))
                .sort(Sorts.ascending(LAST_MODIFIED)).first();
        Optional<Duration> age = Optional.ofNullable(oldest).map(d -> d.getDate(LAST_MODIFIED))
                .map(date -> clock.ageOf(date.toInstant()));
        return new StrategyStatus(config.name(), counts, inFlight, age);
    }

    /** Deletes terminal transactions older than {@code retention}, after pulling tombstones the earlier format left. */
    public int prune(Duration retention) {
        Objects.requireNonNull(retention, "retention");
        Date cutoff = clock.cutoff(retention);
        List<String> terminal = List.of(TransactionState.DONE.stored(), TransactionState.CANCELED.stored());
        int count = 0;
        for (Document tx : transactions.find(and(in(STATE, terminal), lte(LAST_MODIFIED, cutoff)))) {
            Object id = tx.get("_id");
            for (Map.Entry<String, List<Object>> group : idsByCollection(tx).entrySet()) {
                config.retryPolicy().run(config.name(), id, "prune tombstones", () -> database
                        .getCollection(group.getKey())
                        .updateMany(in("_id", group.getValue()), Updates.pull(config.tombstoneField(), id)));
            }
            long deleted = config.retryPolicy().execute(config.name(), id, "prune transaction",
                    () -> transactions.deleteOne(and(eq("_id", id), in(STATE, terminal))).getDeletedCount());
            count += (int) deleted;
        }
        pruned.add(count);
        if (count > 0) {
            LOG.info("[{}] pruned {} terminal transactions older than {}", config.name(), count, retention);
        }
        return count;
    }

    private static Map<String, List<Object>> idsByCollection(Document tx) {
        return idsByCollection(tx.getList(PARTICIPANTS, Document.class));
    }

    private static Map<String, List<Object>> idsByCollection(List<Document> participants) {
        Map<String, List<Object>> groups = new LinkedHashMap<>();
        for (Document p : participants) {
            groups.computeIfAbsent(p.getString(P_COLLECTION), k -> new ArrayList<>()).add(p.get(P_ID));
        }
        return groups;
    }

    /** See {@link dev.consistencykit.twophase.TwoPhaseCommit#readSettled}. */
    public SettledRead readSettled(String collectionName, List<?> ids, Duration maxWait) {
        Inputs.fieldName(config.name(), "collection", collectionName);
        Objects.requireNonNull(ids, "ids");
        List<Object> checked = new ArrayList<>();
        for (int i = 0; i < ids.size(); i++) {
            checked.add(Inputs.documentId(config.name(), "ids[" + i + "]", ids.get(i), registry()));
        }
        ids = checked;
        Objects.requireNonNull(maxWait, "maxWait");
        MongoCollection<Document> collection = database.getCollection(collectionName)
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

    private static List<Document> readOrdered(MongoCollection<Document> collection, List<?> ids) {
        Map<Object, Document> byId = new HashMap<>();
        CodecRegistry registry = collection.getCodecRegistry();
        collection.find(in("_id", ids)).forEach(d -> byId.put(Inputs.idKey(d.get("_id"), registry), d));
        List<Document> ordered = new ArrayList<>();
        for (Object id : ids) {
            Document d = byId.get(Inputs.idKey(id, registry));
            if (d != null) {
                ordered.add(d);
            }
        }
        return ordered;
    }

    private List<Object> pendingOn(List<Document> documents) {
        List<Object> pending = new ArrayList<>();
        for (Document d : documents) {
            pending.addAll(marker.inFlight(d));
        }
        return pending;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ConsistencyException(null, null, "interrupted while waiting for a settled read");
        }
    }

    /** See {@link dev.consistencykit.twophase.TwoPhaseCommit#audit(String)}. */
    public TwoPhaseAudit audit(String field) {
        Inputs.fieldPath(config.name(), "field", field);
        List<String> problems = new ArrayList<>();
        List<Object> inFlight = new ArrayList<>();
        Map<String, Long> effects = new HashMap<>();
        Map<String, Map<Object, Long>> byDocument = new TreeMap<>();
        Map<String, Set<Object>> terminalByCollection = new HashMap<>();
        Set<Object> known = new HashSet<>();
        for (Document tx : transactions.find()) {
            Object id = tx.get("_id");
            known.add(id);
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
                    byDocument.computeIfAbsent(p.getString(P_COLLECTION), k -> new TreeMap<>(Inputs.idOrder()))
                            .merge(p.get(P_ID), delta, Long::sum);
                }
            }
        }
        Set<String> collections = new HashSet<>(terminalByCollection.keySet());
        for (String name : collections) {
            for (Document d : database.getCollection(name).find(Filters.or(exists(config.markerField() + ".0"),
                    exists(config.reservationField() + ".0")))) {
                List<?> applied = Inputs.arrayOf(d, config.markerField());
                for (Object marked : marker.inFlight(d)) {
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

    private static long increments(List<Document> ops, String field) {
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
    public void ensureIndexes() {
        transactions.createIndex(Indexes.ascending(STATE, LAST_MODIFIED), new IndexOptions().name("state_lastModified"));
        transactions.createIndex(Indexes.ascending(OWNER), new IndexOptions().name("owner").sparse(true));
        transactions.createIndex(Indexes.ascending(PARTICIPANTS + "." + P_COLLECTION),
                new IndexOptions().name("participant_collections"));
        for (String name : registeredCollections()) {
            OnceEffects.ensureIndex(database.getCollection(name), marker);
        }
        PatternRegistry.register(database, new PatternRegistry.Registration("two-phase", config.name(),
                Map.of("transactions", config.transactionsCollection(), "accounts", config.accountsCollection()),
                Map.of("balance", config.balanceField(), "marker", config.markerField(), "reservation",
                        config.reservationField(), "tombstone", config.tombstoneField())));
    }

    /** The metrics snapshot. */
    public TwoPhaseMetrics metrics() {
        return new TwoPhaseMetrics(committed.sum(), canceled.sum(), recoveredForward.sum(), recoveredBack.sum(),
                leaseLost.sum(), commitStuck.sum(), pruned.sum());
    }

    private void notify(Runnable call) {
        Listeners.call(config.name(), call);
    }
}
