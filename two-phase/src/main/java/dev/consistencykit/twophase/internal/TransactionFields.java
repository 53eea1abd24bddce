package dev.consistencykit.twophase.internal;

import static com.mongodb.client.model.Filters.and;

import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.EffectMarker;
import dev.consistencykit.core.spi.Listeners;
import dev.consistencykit.core.spi.ReadSettings;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.core.spi.Transition;
import dev.consistencykit.twophase.TransactionState;
import dev.consistencykit.twophase.TwoPhaseConfig;
import dev.consistencykit.twophase.TwoPhaseListener;

/**
 * The transaction record's stored fields, the engine's collections and counters, and the helpers every part of the
 * {@link TransactionEngine} uses.
 */
final class TransactionFields {

    static final Logger LOG = LoggerFactory.getLogger(TransactionEngine.class);

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
    /** Set by recovery on a transaction it cannot finish: {@code {reason, at}}; an operator removes it to retry. */
    static final String SET_ASIDE = "setAside";
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
    public static final String OVERFLOW = "OVERFLOW";

    static final Set<String> CALLER_REASONS = Set.of(INSUFFICIENT_FUNDS, PARTICIPANT_MISSING,
            PRECONDITION_FAILED, TOO_MANY_PENDING, PARTICIPANT_REJECTED, OVERFLOW);
    static final List<String> IN_FLIGHT = TransactionState.IN_FLIGHT.stream().map(TransactionState::stored)
            .sorted().toList();
    static final int RECOVERY_BATCH = 100;

    final TwoPhaseConfig config;
    final MongoDatabase database;
    final MongoCollection<Document> transactions;
    final EffectMarker marker;
    final ServerClock clock;
    final TwoPhaseListener listener;
    final Supplier<String> ownerIds;
    final SpecCodec codec;
    final Map<String, MongoCollection<Document>> participantCollections = new ConcurrentHashMap<>();
    /** Records this instance wrote, to release so that pruning may remove them once finished. */
    final RecordReleases releases;

    final LongAdder committed = new LongAdder();
    final LongAdder canceled = new LongAdder();
    final LongAdder recoveredForward = new LongAdder();
    final LongAdder recoveredBack = new LongAdder();
    final LongAdder leaseLost = new LongAdder();
    final LongAdder commitStuck = new LongAdder();
    final LongAdder pruned = new LongAdder();

    /**
     * @param config    validated settings
     * @param database  the application's database, acknowledged writes
     * @param clock     server time
     * @param listener  hooks
     * @param ownerIds  unique owner names, one per drive
     */
    TransactionFields(TwoPhaseConfig config, MongoDatabase database, ServerClock clock,
                             TwoPhaseListener listener, Supplier<String> ownerIds) {
        database = ReadSettings.ownReads(database);
        this.config = config;
        this.database = database;
        this.transactions = database.getCollection(config.transactionsCollection());
        this.releases = new RecordReleases(config.name(), transactions, config.retryPolicy());
        this.marker = EffectMarker.of(config.reservationField(), config.markerField());
        this.clock = clock;
        this.listener = listener;
        this.ownerIds = ownerIds;
        this.codec = new SpecCodec(config.name(), Set.of(config.markerField(),
                config.reservationField()), database.getCodecRegistry());
    }

    /** The database's codec registry: user values are encoded and checked with it. */
    public CodecRegistry registry() {
        return database.getCodecRegistry();
    }

    /** Thrown inside a drive when the fencing token moved on: another process owns the transaction now. */
    static final class LostOwnership extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final transient Document current;

        LostOwnership(Document current) {
            super(null, null, false, false);
            this.current = current;
        }
    }

    static Document reason(String code, String participant, String message) {
        Document reason = new Document("code", code).append("message", message);
        if (participant != null) {
            reason.append("participant", participant);
        }
        return reason;
    }

    static Map<String, List<Object>> idsByCollection(Document tx) {
        return idsByCollection(tx.getList(PARTICIPANTS, Document.class));
    }

    static Map<String, List<Object>> idsByCollection(List<Document> participants) {
        Map<String, List<Object>> groups = new LinkedHashMap<>();
        for (Document p : participants) {
            groups.computeIfAbsent(p.getString(P_COLLECTION), k -> new ArrayList<>()).add(p.get(P_ID));
        }
        return groups;
    }

    void notify(Runnable call) {
        Listeners.call(config.name(), call);
    }

    Bson claimUpdate(String owner, boolean fromInitial) {
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

    Date leaseExpiry() {
        return Date.from(clock.now().plus(config.lease()));
    }
}
