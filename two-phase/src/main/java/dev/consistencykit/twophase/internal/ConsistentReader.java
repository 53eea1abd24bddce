package dev.consistencykit.twophase.internal;

import static com.mongodb.client.model.Filters.in;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDocumentReader;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.codecs.DecoderContext;
import org.bson.codecs.configuration.CodecRegistry;

import com.mongodb.client.MongoCollection;

import dev.consistencykit.core.spi.EffectMarker;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.twophase.ConsistentRead;
import dev.consistencykit.twophase.TransactionState;

/**
 * The consistent read that never waits: documents as of one read, with every transaction in flight on them counted
 * entirely or not at all.
 *
 * <p><b>How.</b> One find reads the documents (one batch: the embedded server and MongoDB serve it from one view
 * of the collection). Each transaction marked on them is then looked up in the transactions collection. Its record,
 * read <em>after</em> the documents, places it:
 * <ul>
 *   <li>{@code initial}, {@code pending}: undecided while the documents were read, so no participant can have been
 *       settled: counted not at all (its rollback update replayed, by the server, on the copies it is applied to).</li>
 *   <li>{@code canceling}, {@code canceled}: never commits; counted not at all the same way.</li>
 *   <li>{@code applied}, {@code done}: committed, but perhaps only after the documents were read. Where a copy
 *       carries it applied and another carries nothing, it was decided before (an undecided transaction is reserved
 *       or applied on every participant before any is applied), so the bare copy is settled, and the applied ones
 *       get their commit update replayed. Where every copy carries it applied, that holds either way. Where a copy
 *       carries only a reservation, the read cannot tell a reservation the commit is still to consume from one a
 *       paused owner sent after everything settled, so it reads the documents once more: the decision it has now
 *       read precedes that second read, which places the transaction for sure.</li>
 * </ul>
 * A later read only needs the records of transactions it has not placed yet, so each pass costs a round trip or two,
 * and a pass is repeated only for transactions decided in the moment between a find and its lookup. After
 * {@link #PASSES} passes the read answers "unresolved" with their ids rather than wait.
 *
 * <p>An update is replayed by the server itself, on a copy in a scratch collection ({@link ServerReplay}): the only
 * writes a read makes, and only when it races a transaction applied on some of its documents. Safety never rests on
 * clocks.
 */
final class ConsistentReader {

    /** Reads of the documents before the answer is "unresolved". */
    static final int PASSES = 8;

    private static final Set<String> COMMITTED = Set.of(TransactionState.APPLIED.stored(),
            TransactionState.DONE.stored());

    private final TransactionStore store;
    private final EffectMarker marker;
    private final CodecRegistry registry;
    private final ServerReplay replay;

    ConsistentReader(TransactionStore store, ServerReplay replay) {
        this.store = store;
        this.replay = replay;
        this.marker = store.marker();
        this.registry = store.codecs();
    }

    /** A stored value as the application's registry decodes it. */
    private Object java(BsonValue value) {
        return registry.get(Document.class).decode(new BsonDocumentReader(new BsonDocument("v", value)),
                DecoderContext.builder().build()).get("v");
    }

    /** Reads {@code ids} (checked, in order) of {@code collectionName}. */
    ConsistentRead read(String collectionName, List<Object> ids) {
        MongoCollection<BsonDocument> collection = store.rawParticipants(collectionName);
        // records whose decision was read before the documents of the current pass
        Map<BsonValue, BsonDocument> decidedBefore = new HashMap<>();
        List<Object> unresolved = List.of();
        for (int pass = 0; pass < PASSES; pass++) {
            List<BsonDocument> documents = readOrdered(collection, ids, registry);
            Map<BsonValue, BsonValue> inFlight = inFlight(documents);
            List<BsonValue> lookUp = new ArrayList<>();
            inFlight.forEach((key, id) -> {
                if (!decidedBefore.containsKey(key)) {
                    lookUp.add(id);
                }
            });
            Map<BsonValue, BsonDocument> records = new HashMap<>(decidedBefore);
            Map<BsonValue, BsonDocument> readNow = lookUp.isEmpty() ? Map.of() : records(lookUp);
            records.putAll(readNow);
            Placement placement = new Placement(collectionName);
            for (Map.Entry<BsonValue, BsonValue> tx : inFlight.entrySet()) {
                placement.place(tx.getValue(), records.get(tx.getKey()), decidedBefore.containsKey(tx.getKey()),
                        documents);
            }
            if (placement.unreplayable.isEmpty() && placement.ambiguous.isEmpty()) {
                List<Document> result = new ArrayList<>();
                for (BsonDocument d : documents) {
                    result.add(registry.get(Document.class).decode(new BsonDocumentReader(d),
                            DecoderContext.builder().build()));
                }
                return new ConsistentRead(result, placement.counted, placement.notCounted, List.of());
            }
            if (!placement.unreplayable.isEmpty()) {
                return new ConsistentRead(List.of(), List.of(), List.of(), placement.unreplayable);
            }
            readNow.forEach((key, record) -> {
                TransactionState state = stateOf(record);
                if (state != TransactionState.INITIAL && state != TransactionState.PENDING) {
                    decidedBefore.put(key, record);
                }
            });
            unresolved = placement.ambiguous;
        }
        return new ConsistentRead(List.of(), List.of(), List.of(), unresolved);
    }

    private static TransactionState stateOf(BsonDocument record) {
        BsonValue state = record.get(TransactionSchema.STATE);
        if (state == null || !state.isString()) {
            return TransactionState.PENDING;
        }
        try {
            return TransactionState.fromStored(state.asString().getValue());
        } catch (IllegalArgumentException unknown) {
            return TransactionState.PENDING;
        }
    }

    /** One find, one batch, so that the documents are read as of one moment. */
    private static List<BsonDocument> readOrdered(MongoCollection<BsonDocument> collection, List<Object> ids,
                                                  CodecRegistry registry) {
        Map<BsonValue, BsonDocument> byId = new HashMap<>();
        collection.find(in("_id", ids)).batchSize(Math.max(2, ids.size() + 1))
                .forEach(d -> byId.put(Ids.idKey(d.get("_id"), registry), d));
        List<BsonDocument> ordered = new ArrayList<>();
        Set<BsonValue> seen = new java.util.HashSet<>();
        for (Object id : ids) {
            BsonValue key = Ids.idKey(id, registry);
            BsonDocument d = byId.get(key);
            if (d != null && seen.add(key)) {
                ordered.add(d);
            }
        }
        return ordered;
    }

    /** The transactions reserved or applied on the documents, keyed by their id's equality. */
    private Map<BsonValue, BsonValue> inFlight(List<BsonDocument> documents) {
        Map<BsonValue, BsonValue> ids = new LinkedHashMap<>();
        for (BsonDocument d : documents) {
            for (BsonValue entry : array(d, marker.reservedField())) {
                if (entry.isDocument() && entry.asDocument().containsKey(EffectMarker.OPERATION)) {
                    BsonValue id = entry.asDocument().get(EffectMarker.OPERATION);
                    ids.putIfAbsent(Ids.idKey(id), id);
                }
            }
            for (BsonValue id : array(d, marker.appliedField())) {
                ids.putIfAbsent(Ids.idKey(id), id);
            }
        }
        return ids;
    }

    private Map<BsonValue, BsonDocument> records(List<BsonValue> ids) {
        Map<BsonValue, BsonDocument> byId = new HashMap<>();
        store.rawRecords(ids, TransactionSchema.STATE, TransactionSchema.SPEC, RecordReleases.COMPACTED)
                .forEach(r -> {
                    // a compacted record is a finished one past its retention: for a reader, as good as pruned
                    if (!r.containsKey(RecordReleases.COMPACTED)) {
                        byId.put(Ids.idKey(r.get("_id")), r);
                    }
                });
        return byId;
    }

    /** The participant specs, stored as one extended-JSON string; null when unreadable. */
    private static BsonDocument spec(BsonDocument record) {
        BsonValue spec = record.get(TransactionSchema.SPEC);
        if (spec == null || !spec.isString()) {
            return null;
        }
        try {
            return BsonDocument.parse(spec.asString().getValue());
        } catch (RuntimeException unreadable) {
            return null;
        }
    }

    private static BsonArray array(BsonDocument d, String field) {
        BsonValue v = d.get(field);
        return v != null && v.isArray() ? v.asArray() : new BsonArray();
    }

    /** What one document carries for one transaction. */
    private enum Mark { APPLIED, RESERVED, NONE }

    /** The placement of each transaction of one pass, replayed on the documents in place. */
    private final class Placement {
        private final String collectionName;
        final List<Object> counted = new ArrayList<>();
        final List<Object> notCounted = new ArrayList<>();
        final List<Object> ambiguous = new ArrayList<>();
        final List<Object> unreplayable = new ArrayList<>();

        Placement(String collectionName) {
            this.collectionName = collectionName;
        }

        void place(BsonValue txId, BsonDocument record, boolean decidedBefore, List<BsonDocument> documents) {
            BsonValue key = Ids.idKey(txId);
            Map<BsonDocument, BsonDocument> participants = new LinkedHashMap<>();   // document → its participant entry
            Set<Mark> marks = new LinkedHashSet<>();
            BsonDocument spec = record == null ? null : spec(record);
            if (record != null && spec == null) {
                unreplayable.add(java(txId));
                return;
            }
            if (spec != null) {
                for (BsonValue p : array(spec, TransactionSchema.PARTICIPANTS)) {
                    if (!p.isDocument() || !p.asDocument().isString(TransactionSchema.P_COLLECTION)
                            || !collectionName.equals(p.asDocument().getString(TransactionSchema.P_COLLECTION)
                            .getValue()) || !p.asDocument().containsKey(TransactionSchema.P_ID)) {
                        continue;
                    }
                    BsonValue pid = Ids.idKey(p.asDocument().get(TransactionSchema.P_ID));
                    for (BsonDocument d : documents) {
                        if (Ids.idKey(d.get("_id")).equals(pid)) {
                            participants.put(d, p.asDocument());
                            marks.add(mark(d, key));
                        }
                    }
                }
            }
            boolean appliedSomewhere = documents.stream().anyMatch(d -> mark(d, key) == Mark.APPLIED);
            if (record == null) {
                // reservations alone are what a paused owner sends after a transaction finished and was pruned:
                // they carry no effect. An applied mark without its record cannot be placed.
                if (appliedSomewhere) {
                    unreplayable.add(java(txId));
                    return;
                }
                strip(documents, key);
                notCounted.add(java(txId));
                return;
            }
            boolean commit = COMMITTED.contains(stateOf(record).stored());
            if (commit && !decidedBefore && marks.contains(Mark.RESERVED)
                    && !(marks.contains(Mark.APPLIED) && marks.contains(Mark.NONE))) {
                ambiguous.add(java(txId));
                return;
            }
            String field = commit ? TransactionSchema.P_COMMIT : TransactionSchema.P_ROLLBACK;
            for (Map.Entry<BsonDocument, BsonDocument> e : participants.entrySet()) {
                if (mark(e.getKey(), key) != Mark.APPLIED) {
                    continue;   // nothing applied there yet (or settled already): nothing to replay
                }
                BsonValue ops = e.getValue().get(field);
                List<BsonValue> list = ops != null && ops.isArray() ? ops.asArray().getValues() : List.of();
                BsonDocument copy = e.getKey().clone();
                Optional<String> refused = replay.apply(copy, list);
                if (refused.isPresent()) {
                    unreplayable.add(java(txId));
                    return;
                }
                e.getKey().clear();
                e.getKey().putAll(copy);
            }
            strip(documents, key);
            (commit ? counted : notCounted).add(java(txId));
        }

        private Mark mark(BsonDocument d, BsonValue key) {
            for (BsonValue id : array(d, marker.appliedField())) {
                if (Ids.idKey(id).equals(key)) {
                    return Mark.APPLIED;
                }
            }
            for (BsonValue entry : array(d, marker.reservedField())) {
                if (entry.isDocument() && entry.asDocument().containsKey(EffectMarker.OPERATION)
                        && Ids.idKey(entry.asDocument().get(EffectMarker.OPERATION)).equals(key)) {
                    return Mark.RESERVED;
                }
            }
            return Mark.NONE;
        }

        /** Removes the transaction's entries from the copies, and an array it leaves empty. */
        private void strip(List<BsonDocument> documents, BsonValue key) {
            for (BsonDocument d : documents) {
                BsonArray applied = array(d, marker.appliedField());
                applied.removeIf(id -> Ids.idKey(id).equals(key));
                BsonArray reserved = array(d, marker.reservedField());
                reserved.removeIf(entry -> entry.isDocument() && entry.asDocument().containsKey(EffectMarker.OPERATION)
                        && Ids.idKey(entry.asDocument().get(EffectMarker.OPERATION)).equals(key));
                for (String f : List.of(marker.appliedField(), marker.reservedField())) {
                    if (d.get(f) != null && d.get(f).isArray() && d.getArray(f).isEmpty()) {
                        d.remove(f);
                    }
                }
            }
        }
    }
}
