package dev.consistencykit.twophase.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.in;
import static dev.consistencykit.twophase.CancellationReason.INSUFFICIENT_FUNDS;
import static dev.consistencykit.twophase.CancellationReason.OVERFLOW;
import static dev.consistencykit.twophase.CancellationReason.PARTICIPANT_MISSING;
import static dev.consistencykit.twophase.CancellationReason.PARTICIPANT_REJECTED;
import static dev.consistencykit.twophase.CancellationReason.PRECONDITION_FAILED;
import static dev.consistencykit.twophase.CancellationReason.TOO_MANY_PENDING;
import static dev.consistencykit.twophase.internal.TransactionSchema.OWNER;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_COLLECTION;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_COMMIT;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_FUNDS;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_ID;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_PRE;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_PREPARE;
import static dev.consistencykit.twophase.internal.TransactionSchema.STATE;
import static dev.consistencykit.twophase.internal.TransactionSchema.TOKEN;
import static dev.consistencykit.twophase.internal.TransactionSchema.idsByCollection;
import static dev.consistencykit.twophase.internal.TransactionSchema.reason;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.Set;

import org.bson.Document;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoWriteException;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoCollection;

import dev.consistencykit.core.spi.EffectMarker;
import dev.consistencykit.core.spi.GuardedResult;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.MarkerWrite;
import dev.consistencykit.core.spi.OnceEffects;
import dev.consistencykit.core.spi.UpdateOutcome;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.twophase.TransactionState;
import dev.consistencykit.twophase.TwoPhaseConfig;

/**
 * The per-participant steps: reserve, prepare under the reservation, commit or roll back, settle.
 */
final class TransactionParticipants {

    private static final Logger LOG = LoggerFactory.getLogger(TransactionParticipants.class);

    private final TwoPhaseConfig config;
    private final TransactionStore store;
    private final TransactionRecording recording;

    /** The participants' reservations and effects, through the store, with the recording of the intent. */
    TransactionParticipants(TwoPhaseConfig config, TransactionStore store, TransactionRecording recording) {
        this.config = config;
        this.store = store;
        this.recording = recording;
    }

    // ---------------------------------------------------------------- participants

    record Prepared(Document failure, boolean lost) {

        static final Prepared OK = new Prepared(null, false);
        static final Prepared LOST = new Prepared(null, true);

        static Prepared failed(Document reason) {
            return new Prepared(reason, false);
        }
    }

    /**
     * The participant collections named by any recorded transaction (a distinct over an indexed field), and the
     * transfer preset's accounts collection.
     */
    List<String> registeredCollections() {
        return store.participantCollectionNames();
    }

    /**
     * Releases every reservation whose transaction is no longer in flight, in every participant collection any
     * recorded transaction names. Such a reservation is left by an owner that sent it late (after its transaction was
     * finished by others) and died before its ownership check could release it; nobody can apply it, so this only
     * tidies.
     *
     * @return reservations released
     */
    int releaseAbandoned() {
        int released = 0;
        for (String name : registeredCollections()) {
            MongoCollection<Document> collection = store.participants(name);
            List<OnceEffects.Reservation> found = config.retryPolicy().execute(config.name(), null,
                    "find reservations in " + name, () -> OnceEffects.reservations(collection, store.marker(), 1_000));
            if (found.isEmpty()) {
                continue;
            }
            List<Object> ops = found.stream().map(OnceEffects.Reservation::operationId).distinct().toList();
            Set<Object> live = store.inFlight(null, "read reserved transactions", ops);
            for (OnceEffects.Reservation r : found) {
                if (!live.contains(r.operationId())) {
                    long n = config.retryPolicy().execute(config.name(), r.operationId(),
                            "release abandoned reservation", () -> OnceEffects.release(collection, store.marker(),
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

    Map<String, List<Integer>> byCollection(EncodedTransaction tx) {
        Map<String, List<Integer>> groups = new LinkedHashMap<>();
        for (int i = 0; i < tx.participants().size(); i++) {
            groups.computeIfAbsent(tx.participants().get(i).getString(P_COLLECTION), k -> new ArrayList<>()).add(i);
        }
        return groups;
    }

    /** The attempt's nonce in participants' reservations: one per owner and fencing token. */
    static String nonce(String owner, long token) {
        return OnceEffects.nonce(owner, token);
    }

    /**
     * Prepare: reserve every participant for this attempt (one bulk per collection), check that the transaction is
     * still ours and pending, then apply every prepare update under this attempt's reservation (one bulk per
     * collection). A late reservation (this owner paused before it) applies nothing and fails the check; a late apply
     * finds its reservation consumed, released or taken over.
     */
    Prepared prepareAll(EncodedTransaction tx, String owner, long token, String nonce) {
        Map<String, List<Integer>> groups = byCollection(tx);
        Set<Object> inPlace = new HashSet<>();
        for (Map.Entry<String, List<Integer>> group : groups.entrySet()) {
            Document failure = reserveGroup(tx, group, nonce, inPlace);
            if (failure != null) {
                return Prepared.failed(failure);
            }
        }
        Document now = recording.readPrimary(tx.id());
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
    Bson capGuard() {
        int last = config.maxPendingPerDocument() - 1;
        return and(exists(config.reservationField() + "." + last, false), exists(config.markerField() + "." + last,
                false));
    }

    /** Reserves one collection's participants; the reason to cancel, or null. Adds the ones already applied. */
    Document reserveGroup(EncodedTransaction tx, Map.Entry<String, List<Integer>> group, String nonce,
                                  Set<Object> inPlace) {
        MongoCollection<Document> collection = store.participants(group.getKey());
        List<MarkerWrite> writes = new ArrayList<>();
        for (int i : group.getValue()) {
            writes.add(new MarkerWrite(tx.participants().get(i).get(P_ID), capGuard(), null));
        }
        Map<Object, GuardedResult> results;
        try {
            results = config.retryPolicy().execute(config.name(), tx.id(), "reserve " + group.getKey(),
                    () -> OnceEffects.reserve(collection, store.marker(), tx.id(), nonce, writes));
        } catch (MongoBulkWriteException | MongoWriteException | MongoCommandException e) {
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
            switch (store.marker().evidence(current, tx.id(), nonce)) {
                case RESERVED -> {
                }
                case APPLIED -> inPlace.add(id);
                case RESERVED_BY_OTHER -> {
                    String holder = store.marker().reservedBy(current, tx.id());
                    if (OnceEffects.tokenOf(holder) > OnceEffects.tokenOf(nonce)) {
                        // a later owner holds it: this attempt was taken over and must not take it back
                        releaseOwn(tx, nonce);
                        throw new LostOwnership(recording.readPrimary(tx.id()));
                    }
                    // an earlier attempt's reservation (a former owner of this transaction, or a paused owner of a
                    // pruned one under the same id): make it ours
                    GuardedResult taken = config.retryPolicy().execute(config.name(), tx.id(), "take over " + id,
                            () -> OnceEffects.takeOver(collection, store.marker(), id, tx.id(), holder, nonce));
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
    Document reserveAgain(EncodedTransaction tx, MongoCollection<Document> collection, Document p, String nonce,
                                  Set<Object> inPlace) {
        Object id = p.get(P_ID);
        Document current = config.retryPolicy().execute(config.name(), tx.id(), "read " + id,
                () -> collection.withReadPreference(ReadPreference.primary()).find(eq("_id", id)).first());
        if (current == null) {
            return failure(p, new GuardedResult(UpdateOutcome.MISSING, Optional.empty()));
        }
        releaseStale(collection, current);
        Map<Object, GuardedResult> again = config.retryPolicy().execute(config.name(), tx.id(), "reserve " + id,
                () -> OnceEffects.reserve(collection, store.marker(), tx.id(), nonce,
                        List.of(new MarkerWrite(id, capGuard(), null))));
        GuardedResult r = again.get(id);
        if (r.outcome() == UpdateOutcome.APPLIED) {
            return null;
        }
        if (r.outcome() == UpdateOutcome.MISSING) {
            return failure(p, r);
        }
        EffectMarker.Evidence evidence = store.marker().evidence(r.document().orElseThrow(), tx.id(), nonce);
        if (evidence == EffectMarker.Evidence.RESERVED) {
            return null;
        }
        if (evidence == EffectMarker.Evidence.APPLIED) {
            inPlace.add(id);
            return null;
        }
        if (evidence == EffectMarker.Evidence.RESERVED_BY_OTHER) {
            String holder = store.marker().reservedBy(r.document().orElseThrow(), tx.id());
            if (OnceEffects.tokenOf(holder) > OnceEffects.tokenOf(nonce)) {
                // a later owner of this transaction is reserving at the same moment: it owns it now
                releaseOwn(tx, nonce);
                throw new LostOwnership(recording.readPrimary(tx.id()));
            }
            // an earlier owner, taken over but not yet aware of it, moved the reservation again: take it once more
            for (int attempt = 0; attempt < 5; attempt++) {
                String from = holder;
                GuardedResult taken = config.retryPolicy().execute(config.name(), tx.id(), "take over " + id,
                        () -> OnceEffects.takeOver(collection, store.marker(), id, tx.id(), from, nonce));
                if (taken.isInPlace()) {
                    return null;
                }
                Document now = taken.document().orElse(null);
                if (now == null) {
                    return failure(p, taken);
                }
                EffectMarker.Evidence seen = store.marker().evidence(now, tx.id(), nonce);
                if (seen == EffectMarker.Evidence.APPLIED) {
                    inPlace.add(id);
                    return null;
                }
                if (seen != EffectMarker.Evidence.RESERVED_BY_OTHER) {
                    break;
                }
                holder = store.marker().reservedBy(now, tx.id());
                if (OnceEffects.tokenOf(holder) > OnceEffects.tokenOf(nonce)) {
                    releaseOwn(tx, nonce);
                    throw new LostOwnership(recording.readPrimary(tx.id()));
                }
            }
            releaseOwn(tx, nonce);
            throw new LostOwnership(recording.readPrimary(tx.id()));
        }
        return failure(p, r);
    }

    /** Releases the reservations on {@code current} whose transaction is terminal or gone. */
    void releaseStale(MongoCollection<Document> collection, Document current) {
        List<Object> reserved = new ArrayList<>();
        // read back from a document users write: only entries holding an operation id reach a filter
        if (current.get(config.reservationField()) instanceof List<?> entries) {
            for (Object e : entries) {
                if (e instanceof Document d && Ids.isOperationId(d.get(EffectMarker.OPERATION))) {
                    reserved.add(d.get(EffectMarker.OPERATION));
                }
            }
        }
        if (reserved.isEmpty()) {
            return;
        }
        Set<Object> live = store.inFlight(current.get("_id"), "read reserved transactions",
                new ArrayList<>(reserved));
        for (Object op : reserved) {
            if (!live.contains(op)) {
                LOG.info("[{}] releasing {}'s reservation for transaction {}, which is no longer in flight",
                        config.name(), current.get("_id"), op);
                config.retryPolicy().run(config.name(), op, "release stale reservation",
                        () -> OnceEffects.release(collection, store.marker(), op, null, List.of(current.get("_id"))));
            }
        }
    }

    /** Applies one collection's prepare updates under this attempt's reservations. */
    Prepared applyGroup(EncodedTransaction tx, Map.Entry<String, List<Integer>> group, String nonce,
                                Set<Object> inPlace) {
        MongoCollection<Document> collection = store.participants(group.getKey());
        List<MarkerWrite> writes = new ArrayList<>();
        for (int i : group.getValue()) {
            Document p = tx.participants().get(i);
            if (!inPlace.contains(p.get(P_ID))) {
                writes.add(new MarkerWrite(p.get(P_ID), guarded(p), SpecCodec.decodeUpdate(p.getList(P_PREPARE,
                        Object.class))));
            }
        }
        if (writes.isEmpty()) {
            return Prepared.OK;
        }
        Map<Object, GuardedResult> results;
        try {
            results = config.retryPolicy().execute(config.name(), tx.id(), "prepare " + group.getKey(),
                    () -> OnceEffects.apply(collection, store.marker(), tx.id(), nonce, writes));
        } catch (MongoBulkWriteException | MongoWriteException | MongoCommandException e) {
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
            if (store.marker().evidence(r.document().orElseThrow(), tx.id(), nonce) == EffectMarker.Evidence.RESERVED) {
                return Prepared.failed(failure(p, r));
            }
            // our reservation is gone: whoever took the transaction over consumed, released or replaced it
            return Prepared.LOST;
        }
        return Prepared.OK;
    }

    /**
     * A participant's precondition, with the guard that keeps its prepare's {@code $inc}s, and the commit's after
     * them, from overflowing on the document as it is when prepared.
     */
    static Bson guarded(Document p) {
        Bson pre = SpecCodec.decodeCondition(p.getList(P_PRE, Object.class));
        List<Bson> guards = new ArrayList<>();
        if (pre != null) {
            guards.add(pre);
        }
        // the fields the prepare's and the commit's $incs add to hold plain numbers (an array would satisfy a
        // precondition by one of its elements and then refuse the commit, after the decision)
        Bson operands = SpecCodec.operandGuard(SpecCodec.throughCommit(p.getList(P_PREPARE, Object.class),
                p.getList(P_COMMIT, Object.class)));
        if (operands != null) {
            guards.add(operands);
        }
        Bson prepare = SpecCodec.overflowGuard(p.getList(P_PREPARE, Object.class));
        if (prepare != null) {
            guards.add(prepare);
        }
        Bson commit = SpecCodec.overflowGuard(SpecCodec.throughCommit(p.getList(P_PREPARE, Object.class),
                p.getList(P_COMMIT, Object.class)));
        if (commit != null) {
            guards.add(commit);
        }
        return guards.isEmpty() ? null : guards.size() == 1 ? guards.get(0) : and(guards);
    }

    /** Best effort: removes this attempt's own reservations after it found it no longer owns the transaction. */
    void releaseOwn(EncodedTransaction tx, String nonce) {
        for (Map.Entry<String, List<Object>> group : idsByCollection(tx.participants()).entrySet()) {
            config.retryPolicy().run(config.name(), tx.id(), "release " + group.getKey(),
                    () -> OnceEffects.release(store.participants(group.getKey()), store.marker(), tx.id(), nonce, group
                            .getValue()));
        }
    }

    Document failure(Document p, GuardedResult r) {
        String who = p.getString(P_COLLECTION) + "/" + p.get(P_ID);
        if (r.outcome() == UpdateOutcome.MISSING) {
            return reason(PARTICIPANT_MISSING, who, "participant " + who + " does not exist");
        }
        Document current = r.document().orElseThrow();
        int reserved = Values.arrayOf(current, config.reservationField()).size();
        int applied = Values.arrayOf(current, config.markerField()).size();
        if (Math.max(reserved, applied) >= config.maxPendingPerDocument()) {
            return reason(TOO_MANY_PENDING, who, "participant " + who + " already carries "
                    + (reserved + applied) + " unsettled transactions (the cap is " + config.maxPendingPerDocument()
                    + ")");
        }
        // which part of the guard refused is the server's answer, one query per part on this failure path only
        Predicate<Bson> holds = part -> config.retryPolicy().execute(config.name(), null, "ask why " + who
                + " was refused", () -> store.matches(p.getString(P_COLLECTION), p.get(P_ID), part));
        List<Object> prepare = p.getList(P_PREPARE, Object.class);
        List<Object> throughCommit = SpecCodec.throughCommit(prepare, p.getList(P_COMMIT, Object.class));
        Bson operands = SpecCodec.operandGuard(throughCommit);
        if (operands != null && !holds.test(operands)) {
            return reason(PRECONDITION_FAILED, who, "precondition failed for " + who + ": "
                    + SpecCodec.operandOf(throughCommit, current).orElse("a field its $incs add to holds what they"
                    + " cannot add to"));
        }
        Bson overflow = SpecCodec.overflowGuard(prepare);
        if (overflow != null && !holds.test(overflow)) {
            return reason(OVERFLOW, who, "the prepare of " + who + " was refused: "
                    + SpecCodec.overflowOf(prepare, current));
        }
        Bson later = SpecCodec.overflowGuard(throughCommit);
        if (later != null && !holds.test(later)) {
            return reason(OVERFLOW, who, "the prepare of " + who + " was refused, its commit would follow with "
                    + SpecCodec.overflowOf(throughCommit, current));
        }
        Optional<SpecCodec.Unmet> unmet = SpecCodec.firstUnmet(p.getList(P_PRE, Object.class), holds, current);
        String funds = p.getString(P_FUNDS);
        if (funds != null && unmet.filter(u -> u.path().equals(funds)).isPresent()) {
            return reason(INSUFFICIENT_FUNDS, who, "insufficient funds in " + who + ": "
                    + unmet.get().description());
        }
        return reason(PRECONDITION_FAILED, who, "precondition failed for " + who
                + unmet.map(u -> ": " + u.description()).orElse(""));
    }

    /**
     * Which participant of a group the server refused a whole command for (a command error names no write): the
     * first whose guard the server refuses to match or cannot evaluate; the first of the group if none. On the
     * failure path only, one query per participant.
     */
    private int refusing(Map.Entry<String, List<Integer>> group, EncodedTransaction tx) {
        for (int k = 0; k < group.getValue().size(); k++) {
            Document p = tx.participants().get(group.getValue().get(k));
            Bson guard = guarded(p);
            if (guard == null) {
                continue;
            }
            try {
                if (!config.retryPolicy().execute(config.name(), tx.id(), "ask which participant was refused",
                        () -> store.matches(p.getString(P_COLLECTION), p.get(P_ID), guard))) {
                    return k;
                }
            } catch (MongoCommandException refused) {
                return k;
            }
        }
        return 0;
    }

    Document rejected(EncodedTransaction tx, Map.Entry<String, List<Integer>> group, MongoException e, String what) {
        int index = 0;
        if (e instanceof MongoBulkWriteException be && !be.getWriteErrors().isEmpty()) {
            index = be.getWriteErrors().get(0).getIndex();
        } else if (e instanceof MongoCommandException && group.getValue().size() > 1) {
            index = refusing(group, tx);
        }
        Document p = tx.participants().get(group.getValue().get(Math.min(index, group.getValue().size() - 1)));
        String who = p.getString(P_COLLECTION) + "/" + p.get(P_ID);
        LOG.warn("[{}] the server refused the {} of {} for transaction {}: {}", config.name(), what, who, tx.id(),
                e.getMessage());
        return reason(PARTICIPANT_REJECTED, who, "the server refused the " + what + " of " + who + ": "
                + e.getMessage());
    }
}
