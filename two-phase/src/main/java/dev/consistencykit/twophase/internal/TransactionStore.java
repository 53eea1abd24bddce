package dev.consistencykit.twophase.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.lte;
import static dev.consistencykit.twophase.internal.TransactionSchema.IN_FLIGHT;
import static dev.consistencykit.twophase.internal.TransactionSchema.LAST_ERROR;
import static dev.consistencykit.twophase.internal.TransactionSchema.LAST_MODIFIED;
import static dev.consistencykit.twophase.internal.TransactionSchema.LEASE;
import static dev.consistencykit.twophase.internal.TransactionSchema.OWNER;
import static dev.consistencykit.twophase.internal.TransactionSchema.PARTICIPANTS;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_COLLECTION;
import static dev.consistencykit.twophase.internal.TransactionSchema.SET_ASIDE;
import static dev.consistencykit.twophase.internal.TransactionSchema.STATE;
import static dev.consistencykit.twophase.internal.TransactionSchema.TOKEN;

import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.bson.types.ObjectId;

import com.mongodb.MongoException;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.CountOptions;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.result.UpdateResult;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.KeptRecord;
import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.Claim;
import dev.consistencykit.core.spi.ConditionalUpdates;
import dev.consistencykit.core.spi.EffectMarker;
import dev.consistencykit.core.spi.GuardedResult;
import dev.consistencykit.core.spi.LeaseFields;
import dev.consistencykit.core.spi.MongoErrors;
import dev.consistencykit.core.spi.OnceEffects;
import dev.consistencykit.core.spi.PatternRegistry;
import dev.consistencykit.core.spi.PatternSetup;
import dev.consistencykit.core.spi.ReadSettings;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.core.spi.RequiredIndexes;
import dev.consistencykit.core.spi.StateSnapshot;
import dev.consistencykit.core.spi.Transition;
import dev.consistencykit.core.spi.WriteConcerns;
import dev.consistencykit.twophase.TransactionState;
import dev.consistencykit.twophase.TwoPhaseConfig;

/**
 * The only owner of two-phase commit's collections — the transactions, the participants' collections (whose once-only
 * writes go through {@link OnceEffects} with this instance's {@link #marker()}), and the scratch collection of the
 * consistent read's replays — offering the writes of a transaction's record by name (record, claim, take over, move,
 * note a stuck commit, set aside, prune) and the reads its parts make. It also holds the records this instance wrote
 * and has not released yet ({@link RecordReleases}).
 */
public final class TransactionStore implements PatternSetup {

    /** The fencing fields of a record: who owns it, until when, with which token. */
    static final LeaseFields TOKEN_FIELDS = new LeaseFields(OWNER, LEASE, TOKEN);

    private final TwoPhaseConfig config;
    private final String name;
    private final RetryPolicy retry;
    private final MongoDatabase database;
    private final MongoCollection<Document> transactions;
    private final MongoCollection<BsonDocument> rawTransactions;
    private final MongoCollection<BsonDocument> scratch;
    private final Map<String, MongoCollection<Document>> participants = new ConcurrentHashMap<>();
    private final EffectMarker marker;
    /** Records this instance wrote, to release so that pruning may remove them once finished. */
    private final RecordReleases releases;
    /** Where the records and the replay's scratch copies may live on a sharded cluster, checked before a record. */
    private final RequiredIndexes placements;
    /** Where the records may live for {@code processNext()}'s claim, checked before its first claim. */
    private final RequiredIndexes claimPlacement;

    /** The collections of {@code config} in {@code database} (already checked for an acknowledged write concern). */
    public TransactionStore(TwoPhaseConfig config, MongoDatabase database) {
        this.database = ReadSettings.ownReads(database);
        this.config = config;
        this.name = config.name();
        this.retry = config.retryPolicy();
        this.transactions = this.database.getCollection(config.transactionsCollection());
        this.rawTransactions = this.database.getCollection(config.transactionsCollection(), BsonDocument.class)
                .withReadPreference(ReadPreference.primary());
        this.scratch = this.database.getCollection(TransactionSchema.scratchName(config.transactionsCollection()),
                BsonDocument.class).withReadPreference(ReadPreference.primary());
        this.marker = EffectMarker.of(config.reservationField(), config.markerField());
        this.releases = new RecordReleases(name, transactions, retry);
        this.placements = new RequiredIndexes(name, this.database, List.of(), List.of(
                RequiredIndexes.Placement.byId(transactions, "records each transaction once by its id, which stays"
                        + " unique across shards only on a shard key led by _id, and takes a stale one over with"
                        + " findOneAndUpdate by _id"),
                RequiredIndexes.Placement.byId(scratch, "replays a transaction's updates on scratch copies with"
                        + " findOneAndUpdate by _id")));
        this.claimPlacement = new RequiredIndexes(name, this.database, List.of(), List.of(
                RequiredIndexes.Placement.unsharded(transactions, "claims the oldest waiting transaction in"
                        + " processNext() with findOneAndUpdate by state, which a sharded collection refuses without"
                        + " its shard key")));
    }

    // ---------------------------------------------------------------- setup and holds

    /** The indexes the queries need, each participant collection's marker index, and the registration. */
    @Override
    public void ensureIndexes() {
        transactions.createIndex(Indexes.ascending(STATE, LAST_MODIFIED), new IndexOptions()
                .name("state_lastModified"));
        transactions.createIndex(Indexes.ascending(OWNER), new IndexOptions().name("owner").sparse(true));
        RecordReleases.ensureIndex(transactions);
        transactions.createIndex(Indexes.ascending(PARTICIPANTS + "." + P_COLLECTION),
                new IndexOptions().name("participant_collections"));
        for (String collection : participantCollectionNames()) {
            OnceEffects.ensureIndex(database.getCollection(collection), marker);
        }
        placements.create();
        PatternRegistry.register(database, new PatternRegistry.Registration("two-phase", config.name(),
                Map.of("transactions", config.transactionsCollection(), "accounts", config.accountsCollection()),
                Map.of("balance", config.balanceField(), "marker", config.markerField(), "reservation",
                        config.reservationField())));
    }

    /** How the records' and scratch copies' collections are sharded, if that breaks what this instance does. */
    @Override
    public List<String> setupProblems() {
        return placements.problems();
    }

    /** Releases the records this instance wrote and still holds. */
    @Override
    public void close() {
        releases.flush();
    }

    /** Notes that this instance wrote record {@code id} with {@code nonce}: it is held until released. */
    void written(Object id, String nonce) {
        releases.written(id, nonce);
    }

    /** Held records changed before {@code cutoff}: see {@link RecordReleases#kept}. */
    List<KeptRecord> kept(ServerClock clock, Date cutoff, int limit) {
        return RecordReleases.kept(transactions, LAST_MODIFIED, clock, cutoff, limit);
    }

    /** The database's codec registry: user values are encoded and checked with it. */
    CodecRegistry codecs() {
        return database.getCodecRegistry();
    }

    /** Where each participant carries its reservations and applied marks. */
    EffectMarker marker() {
        return marker;
    }

    // ---------------------------------------------------------------- the record

    /**
     * Inserts the record of {@code id} with one upsert whose filter never matches an existing document; {@code null}
     * if this request inserted it, else the record as it is (read from the primary).
     */
    Document record(Object id, Bson update) {
        placements.verify();
        return retry.execute(name, id, "record transaction", () -> {
            try {
                UpdateResult r = transactions.updateOne(and(eq("_id", id), exists(STATE, false)), update,
                        new UpdateOptions().upsert(true));
                if (r.getUpsertedId() != null) {
                    return null;
                }
                throw new ConsistencyException(name, id, "recording the transaction matched an existing document"
                        + " without a state; the transactions collection holds foreign data");
            } catch (MongoException e) {
                if (!MongoErrors.isDuplicateKey(e)) {
                    throw e;
                }
                return readPrimary(id);
            }
        });
    }

    /** Waits until record {@code id}, found rather than written, is as durable as the write concern asks. */
    void confirmRecord(Object id) {
        retry.run(name, id, "confirm record", () -> WriteConcerns.confirm(transactions, id, name,
                "record transaction"));
    }

    /** Record {@code id} as the primary holds it; {@code null} if none. Not retried. */
    Document readPrimary(Object id) {
        return transactions.withReadPreference(ReadPreference.primary()).find(eq("_id", id)).first();
    }

    /** Record {@code id} as a read finds it; {@code null} if none. Not retried. */
    Document read(Object id) {
        return transactions.find(eq("_id", id)).first();
    }

    /**
     * Claims the oldest {@code initial} record for {@code owner} with {@code claim}; a retry looks first for what its
     * earlier attempt claimed (its reply may have been lost, and the transaction would stay claimed by this owner,
     * driven by no one, until it went stale). {@code null} if none is waiting.
     */
    Document claimNext(String owner, Bson claim) {
        claimPlacement.verify();
        AtomicInteger attempts = new AtomicInteger();
        return retry.execute(name, null, "claim next transaction", () -> {
            Document mine = attempts.getAndIncrement() > 0 ? ConditionalUpdates.heldBy(transactions,
                    eq(STATE, TransactionState.PENDING.stored()), owner, TOKEN_FIELDS).map(Claim::document)
                    .orElse(null) : null;
            return mine != null ? mine : transactions.findOneAndUpdate(eq(STATE, TransactionState.INITIAL.stored()),
                    claim, new FindOneAndUpdateOptions().sort(Sorts.ascending(LAST_MODIFIED))
                            .returnDocument(ReturnDocument.AFTER).upsert(false));
        });
    }

    /** Takes over the record {@code filter} matches with {@code claim}; the record after, or {@code null}. */
    Document takeOver(Object id, Bson filter, Bson claim) {
        return retry.execute(name, id, "take over transaction", () -> transactions.findOneAndUpdate(filter, claim,
                new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER).upsert(false)));
    }

    /** Moves the record's state by {@code transition} (guarded by the owner's token). */
    GuardedResult move(Object id, String what, Transition transition) {
        return retry.execute(name, id, what, () -> ConditionalUpdates.transition(transactions, id, transition));
    }

    /** Notes on the record, if {@code token} still holds it, the participant update the server refused. */
    void noteStuck(Object id, long token, String collection, String error) {
        transactions.updateOne(and(eq("_id", id), eq(TOKEN, token)), Updates.combine(
                Updates.set(LAST_ERROR, new Document("collection", collection).append("message", error)),
                Updates.currentDate(LAST_MODIFIED)));
    }

    /** Sets an in-flight record aside for an operator, with {@code why}. */
    void setAside(Object id, String why) {
        retry.run(name, id, "set aside", () -> transactions.updateOne(and(eq("_id", id), in(STATE, IN_FLIGHT)),
                Updates.combine(Updates.set(SET_ASIDE + ".reason", why), Updates.currentDate(SET_ASIDE + ".at"))));
    }

    /** The in-flight records matching {@code stale}, oldest change first: state, token and last change only. */
    List<Document> stale(Bson stale, int limit) {
        return transactions.find(stale).projection(Projections.include(STATE, TOKEN, LAST_MODIFIED))
                .sort(Sorts.ascending(LAST_MODIFIED)).limit(limit).into(new ArrayList<>());
    }

    /** Which of {@code ids} are in flight, read from the primary. */
    Set<Object> inFlight(Object operationId, String what, List<Object> ids) {
        Set<Object> live = new HashSet<>();
        retry.run(name, operationId, what, () -> {
            live.clear();
            transactions.withReadPreference(ReadPreference.primary()).find(and(in("_id", ids), in(STATE, IN_FLIGHT)))
                    .projection(Projections.include("_id")).forEach(d -> live.add(d.get("_id")));
        });
        return live;
    }

    /** The participant collections any record names (a distinct over an indexed field), as stored. */
    List<BsonValue> namedCollections() {
        return retry.execute(name, null, "list participant collections",
                () -> transactions.distinct(PARTICIPANTS + "." + P_COLLECTION, BsonValue.class)
                        .into(new ArrayList<>()));
    }

    /** The accounts collection and every collection a record names that could be a participant's. */
    List<String> participantCollectionNames() {
        List<String> names = new ArrayList<>();
        names.add(config.accountsCollection());
        for (BsonValue value : namedCollections()) {
            // read back: only a name a participant could have been given is a collection to visit
            if (value != null && value.isString()
                    && dev.consistencykit.core.spi.Names.isCollectionName(value.asString().getValue())
                    && !names.contains(value.asString().getValue())) {
                names.add(value.asString().getValue());
            }
        }
        return names;
    }

    /** Records finished (done or canceled) after {@code since}, counted up to {@code cap}. */
    long countFinishedSince(Date since, int cap) {
        return transactions.countDocuments(and(in(STATE, List.of(TransactionState.DONE.stored(),
                TransactionState.CANCELED.stored())), gt(LAST_MODIFIED, since)), new CountOptions().limit(cap));
    }

    /** In-flight records unchanged since {@code cutoff}, oldest first, at most {@code limit}. */
    List<Document> inFlightBefore(Date cutoff, int limit) {
        return transactions.find(and(in(STATE, IN_FLIGHT), lte(LAST_MODIFIED, cutoff)))
                .projection(Projections.include(STATE, LAST_MODIFIED, PARTICIPANTS, SET_ASIDE))
                .sort(Sorts.ascending(LAST_MODIFIED)).limit(limit).into(new ArrayList<>());
    }

    /** The records by state, from one pass. */
    StateSnapshot snapshot() {
        return StateSnapshot.of(transactions, STATE, LAST_MODIFIED);
    }

    /** Every record, in id order (an unsorted scan of several batches may return one twice on DocumentDB). */
    Iterable<Document> everyRecord() {
        return transactions.find().sort(Sorts.ascending("_id"));
    }

    /** Deletes terminal records changed before {@code cutoff} that their writers released; how many. */
    long deleteFinished(List<String> terminal, Date cutoff) {
        return retry.execute(name, null, "prune transactions", () -> transactions.deleteMany(and(in(STATE, terminal),
                lte(LAST_MODIFIED, cutoff), RecordReleases.released())).getDeletedCount());
    }

    /** Compacts held terminal records changed before {@code cutoff} down to what a late retry reads; how many. */
    long compactFinished(List<String> terminal, Date cutoff, List<String> away) {
        return retry.execute(name, null, "compact held transactions", () -> RecordReleases.compact(transactions,
                and(in(STATE, terminal), lte(LAST_MODIFIED, cutoff)), List.of(RecordReleases.FIELD), away));
    }

    /** The records of {@code ids} with {@code fields}, as stored, from the primary. */
    List<BsonDocument> rawRecords(List<BsonValue> ids, String... fields) {
        return rawTransactions.find(in("_id", ids)).projection(Projections.include(fields))
                .batchSize(Math.max(2, ids.size() + 1)).into(new ArrayList<>());
    }

    // ---------------------------------------------------------------- participants

    /** A participant collection; built once per name, since the driver builds a new object per call. */
    MongoCollection<Document> participants(String collection) {
        return participants.computeIfAbsent(collection, database::getCollection);
    }

    /**
     * Whether participant {@code id} of {@code collection} matches {@code filter} now, as the server evaluates it: a
     * query by id and that filter, projected to the id.
     */
    boolean matches(String collection, Object id, Bson filter) {
        return participants(collection).withReadPreference(ReadPreference.primary()).find(and(eq("_id", id), filter))
                .projection(Projections.include("_id")).limit(1).first() != null;
    }

    /** A participant collection as stored documents, read from the primary. */
    MongoCollection<BsonDocument> rawParticipants(String collection) {
        return database.getCollection(collection, BsonDocument.class).withReadPreference(ReadPreference.primary());
    }

    /** The documents of {@code ids} in {@code collection} that carry a reservation or an applied mark. */
    Iterable<Document> marked(String collection) {
        return database.getCollection(collection).find(com.mongodb.client.model.Filters.or(
                exists(config.markerField() + ".0"), exists(config.reservationField() + ".0")));
    }

    /** The documents of {@code ids} in {@code collection}, as stored. */
    Iterable<Document> documents(String collection, List<Object> ids) {
        return database.getCollection(collection).find(in("_id", ids));
    }

    // ---------------------------------------------------------------- replay scratch

    /** Inserts a scratch copy. */
    void insertCopy(BsonDocument copy) {
        scratch.insertOne(copy);
    }

    /** Applies {@code update} to scratch copy {@code id}; the copy after, or {@code null} if it vanished. */
    BsonDocument updateCopy(ObjectId id, Bson update) {
        return scratch.findOneAndUpdate(eq("_id", id), update,
                new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER));
    }

    /** Deletes scratch copy {@code id}. */
    void deleteCopy(ObjectId id) {
        ConditionalUpdates.delete(scratch, id, null);
    }

    /** Deletes the scratch copies whose id is below {@code oldest}; how many. */
    long deleteCopiesBefore(ObjectId oldest) {
        return retry.execute(name, null, "prune replay copies", () -> scratch.deleteMany(lt("_id", oldest))
                .getDeletedCount());
    }

    /** The scratch collection's name. */
    String scratchName() {
        return scratch.getNamespace().getCollectionName();
    }
}
