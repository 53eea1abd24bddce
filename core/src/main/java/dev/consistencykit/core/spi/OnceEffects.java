package dev.consistencykit.core.spi;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.elemMatch;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.ne;
import static com.mongodb.client.model.Filters.size;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.ReadPreference;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;

import dev.consistencykit.core.RetryPolicy;

/**
 * The lifecycle of exactly-once evidence on documents an operation does not own: <b>reserve</b> → (the owner checks
 * it still owns the operation) → <b>apply</b> → <b>settle</b>, or <b>release</b> instead of apply. Every step is one
 * guarded single-document update (several documents of one collection go in one unordered bulk write), classified
 * by re-reading into an {@link UpdateOutcome} when its guard did not match.
 *
 * <ol>
 *   <li>{@link #reserve}: pushes {@code {o: operationId, n: nonce}} onto the {@linkplain EffectMarker#reservedField
 *       reserved} array, if the operation is neither reserved nor applied there. No effect is applied, so a
 *       reservation sent late does no harm by itself.</li>
 *   <li>The caller then proves it still owns the operation, <em>after</em> the reservation is in place: a read or a
 *       compare-and-set of the operation's own record (its state and fencing token, or a lease).</li>
 *   <li>{@link #apply}: applies the effect only if <em>this attempt's</em> reservation is there (a positive guard),
 *       and in the same atomic write moves the operation from reserved to {@linkplain EffectMarker#appliedField
 *       applied}.</li>
 *   <li>{@link #settle}: applies the settling effect (a commit's credit, a rollback's reversal, nothing) only if the
 *       operation is applied there, and pulls it: the document carries nothing for the operation any more.
 *       {@link #release} pulls a reservation that was never applied.</li>
 * </ol>
 *
 * <p><b>Bounded.</b> A document carries an entry only between reserve and settle (or release), so its overhead is
 * bounded by the operations in flight on it, not by throughput × time. No tombstone is kept.
 *
 * <p><b>Why a late writer cannot apply twice.</b> A writer paused for any length of time wakes with one request
 * already built. If it is an {@code apply}, its guard asks for its own reservation, which whoever finished the
 * operation either consumed (apply), pulled (settle, release) or replaced with its own nonce ({@link #takeOver}):
 * refused, whatever evidence has been removed since. If it is a {@code reserve}, it lands (the operation left no
 * evidence to refuse it) but applies nothing; the writer's next step is the ownership check, which fails because the
 * operation was finished, taken over, or is gone (its fencing token moved on, its record is terminal or deleted), so
 * its {@code apply} is never sent and it {@linkplain #release releases} its reservation. A writer that dies there
 * leaves one reservation nobody can apply (no live attempt has its nonce): it is removed when met. Conversely, an
 * owner that passed its check and then paused cannot be overtaken unseen: whoever takes the operation over does so
 * after that check, finds the reservation already in place, and consumes or replaces it before applying, so the
 * late apply finds no reservation of its own. Safety thus rests on the order of writes on one document and on the
 * owner's record, never on clocks or on how long evidence is kept.
 *
 * <p>Stateless and thread-safe. None of these methods retries: each is idempotent, so wrap it in a
 * {@link RetryPolicy}. Re-reads go to the primary.
 */
public final class OnceEffects {

    private OnceEffects() {
    }

    /**
     * Reserves {@code operationId} for the attempt {@code nonce} on each document: one unordered bulk write (one
     * {@code updateOne} for one document).
     *
     * @param writes each document's id and an extra guard (a cap on the reserved array, a precondition), or no
     *               guard; their updates are ignored
     * @return per document, in order: {@code APPLIED} (reserved now), {@code ALREADY_APPLIED} (this attempt's
     *         reservation, or the operation's effect, is already there: see {@link EffectMarker#evidence}),
     *         {@code GUARD_FAILED} (reserved by another attempt, or the extra guard refused), {@code MISSING}
     */
    public static Map<Object, GuardedResult> reserve(MongoCollection<Document> collection, EffectMarker marker,
                                                     Object operationId, String nonce, List<MarkerWrite> writes) {
        check(operationId, nonce, writes);
        Bson update = Updates.push(marker.reservedField(), entry(operationId, nonce));
        return write(collection, writes, w -> reserveFilter(marker, operationId, w),
                w -> update, current -> switch (marker.evidence(current, operationId, nonce)) {
                    case RESERVED, APPLIED -> UpdateOutcome.ALREADY_APPLIED;
                    default -> UpdateOutcome.GUARD_FAILED;
                });
    }

    /**
     * {@link #reserve} of one document by one {@code findOneAndUpdate}, which also returns the document's two marker
     * arrays as they are after the call, so that the caller sees what else is in flight there (for instance evidence
     * of an older format to tidy). Same round trips as {@link #reserve}.
     *
     * @return as {@link #reserve}; the document (its {@code _id} and marker arrays) is always present unless
     *         {@code MISSING}
     */
    public static GuardedResult reserveOne(MongoCollection<Document> collection, EffectMarker marker,
                                           Object operationId, String nonce, Object id, Bson guard) {
        MarkerWrite w = new MarkerWrite(id, guard, null);
        check(operationId, nonce, List.of(w));
        com.mongodb.client.model.FindOneAndUpdateOptions options = new com.mongodb.client.model
                .FindOneAndUpdateOptions().returnDocument(com.mongodb.client.model.ReturnDocument.AFTER)
                .upsert(false).projection(com.mongodb.client.model.Projections.include(marker.reservedField(),
                        marker.appliedField()));
        Document after = collection.findOneAndUpdate(reserveFilter(marker, operationId, w),
                Updates.push(marker.reservedField(), entry(operationId, nonce)), options);
        if (after != null) {
            return GuardedResult.of(UpdateOutcome.APPLIED, after);
        }
        Document current = reread(collection, id);
        if (current == null) {
            return GuardedResult.of(UpdateOutcome.MISSING, null);
        }
        return GuardedResult.of(switch (marker.evidence(current, operationId, nonce)) {
            case RESERVED, APPLIED -> UpdateOutcome.ALREADY_APPLIED;
            default -> UpdateOutcome.GUARD_FAILED;
        }, current);
    }

    /**
     * Moves the reservation of {@code operationId} on document {@code id} from the attempt {@code from} to the
     * attempt {@code to}, so that {@code from} can no longer apply there. Only for an owner that took the operation
     * over; it must check its ownership again before applying.
     *
     * @return {@code APPLIED}; {@code ALREADY_APPLIED} if {@code to} holds it already; {@code GUARD_FAILED} with
     *         the current document if {@code from} does not hold it; {@code MISSING}
     */
    public static GuardedResult takeOver(MongoCollection<Document> collection, EffectMarker marker, Object id,
                                         Object operationId, String from, String to) {
        Ids.documentId(null, "id", id);
        check(operationId, to, List.of(MarkerWrite.of(id, null)));
        Objects.requireNonNull(from, "from");
        long matched = collection.updateOne(and(eq("_id", id), elemMatch(marker.reservedField(),
                        and(eq(EffectMarker.OPERATION, operationId), eq(EffectMarker.NONCE, from)))),
                Updates.set(marker.reservedField() + ".$." + EffectMarker.NONCE, to)).getMatchedCount();
        if (matched == 1) {
            return GuardedResult.of(UpdateOutcome.APPLIED, null);
        }
        Document current = reread(collection, id);
        if (current == null) {
            return GuardedResult.of(UpdateOutcome.MISSING, null);
        }
        return GuardedResult.of(marker.evidence(current, operationId, to) == EffectMarker.Evidence.RESERVED
                ? UpdateOutcome.ALREADY_APPLIED : UpdateOutcome.GUARD_FAILED, current);
    }

    /**
     * Applies each document's effect if the attempt {@code nonce} holds its reservation there and the extra guard
     * holds, moving the operation from reserved to applied in the same write.
     *
     * @return per document: {@code APPLIED}; {@code ALREADY_APPLIED} (the operation's effect is in place, applied by
     *         an earlier attempt of this call or by an attempt that took the reservation over);
     *         {@code GUARD_FAILED} with the current document (the extra guard refused while the reservation is still
     *         there, or this attempt no longer holds it: see {@link EffectMarker#evidence}); {@code MISSING}
     */
    public static Map<Object, GuardedResult> apply(MongoCollection<Document> collection, EffectMarker marker,
                                                   Object operationId, String nonce, List<MarkerWrite> writes) {
        check(operationId, nonce, writes);
        Bson move = Updates.combine(Updates.pull(marker.reservedField(), new Document(EffectMarker.OPERATION,
                operationId)), Updates.push(marker.appliedField(), operationId));
        // the only reservation there: the array goes with it rather than stay behind empty
        Bson moveSole = Updates.combine(Updates.unset(marker.reservedField()),
                Updates.push(marker.appliedField(), operationId));
        Function<MarkerWrite, Bson> filter = w -> {
            List<Bson> filters = new ArrayList<>();
            filters.add(eq("_id", w.id()));
            filters.add(elemMatch(marker.reservedField(), and(eq(EffectMarker.OPERATION, operationId),
                    eq(EffectMarker.NONCE, nonce))));
            if (w.guard() != null) {
                filters.add(w.guard());
            }
            return and(filters);
        };
        return tidyWrite(collection, writes, marker.reservedField(),
                w -> and(filter.apply(w), size(marker.reservedField(), 1)),
                w -> w.updateWhenLast() == null ? moveSole : Updates.combine(w.updateWhenLast(), moveSole), filter,
                w -> w.update() == null ? move : Updates.combine(w.update(), move),
                current -> marker.evidence(current, operationId, nonce) == EffectMarker.Evidence.APPLIED
                        ? UpdateOutcome.ALREADY_APPLIED : UpdateOutcome.GUARD_FAILED);
    }

    /**
     * Settles {@code operationId} on each document: applies the settling update if the operation is applied there
     * and the extra guard holds, and pulls it, in one write per document.
     *
     * @return per document: {@code APPLIED}; {@code ALREADY_APPLIED} if the operation is not applied there (settled
     *         before, or never applied: the caller knows which); {@code GUARD_FAILED} if it is applied but the extra
     *         guard refused; {@code MISSING}
     */
    public static Map<Object, GuardedResult> settle(MongoCollection<Document> collection, EffectMarker marker,
                                                    Object operationId, List<MarkerWrite> writes) {
        check(operationId, "settle", writes);
        Bson settle = Updates.pull(marker.appliedField(), operationId);
        Bson settleSole = Updates.unset(marker.appliedField());   // the last operation applied there: nothing stays empty
        Function<MarkerWrite, Bson> filter = w -> w.guard() == null
                ? and(eq("_id", w.id()), eq(marker.appliedField(), operationId))
                : and(eq("_id", w.id()), eq(marker.appliedField(), operationId), w.guard());
        return tidyWrite(collection, writes, marker.appliedField(),
                w -> and(filter.apply(w), size(marker.appliedField(), 1)),
                w -> w.updateWhenLast() == null ? settleSole : Updates.combine(w.updateWhenLast(), settleSole),
                filter,
                w -> w.update() == null ? settle : Updates.combine(w.update(), settle),
                current -> marker.evidence(current, operationId, null) == EffectMarker.Evidence.APPLIED
                        ? UpdateOutcome.GUARD_FAILED : UpdateOutcome.ALREADY_APPLIED);
    }

    /**
     * Pulls the reservation of {@code operationId} from documents {@code ids}: the one of attempt {@code nonce}, or
     * any attempt's when {@code nonce} is null. A reservation is never applied after its release, so releasing one
     * is always safe: at worst its holder's apply is refused, and it reports that.
     *
     * @return how many documents carried such a reservation
     */
    public static long release(MongoCollection<Document> collection, EffectMarker marker, Object operationId,
                               String nonce, List<?> ids) {
        Ids.operationId(null, "operationId", operationId);
        if (ids.isEmpty()) {
            return 0;
        }
        Document entry = new Document(EffectMarker.OPERATION, operationId);
        if (nonce != null) {
            entry.append(EffectMarker.NONCE, nonce);
        }
        Bson held = nonce == null ? eq(marker.reservedField() + "." + EffectMarker.OPERATION, operationId)
                : elemMatch(marker.reservedField(), and(eq(EffectMarker.OPERATION, operationId),
                eq(EffectMarker.NONCE, nonce)));
        Bson filter = ids.size() == 1 ? and(eq("_id", ids.get(0)), held) : and(in("_id", ids), held);
        // where it is the only reservation the array goes with it; elsewhere it is pulled
        long sole = collection.updateMany(and(filter, size(marker.reservedField(), 1)),
                Updates.unset(marker.reservedField())).getMatchedCount();
        if (sole == ids.size()) {
            return sole;
        }
        long pulled = collection.updateMany(filter, Updates.pull(marker.reservedField(), entry)).getMatchedCount();
        if (pulled > 0) {
            removeIfEmpty(collection, ids, marker.reservedField());
        }
        return sole + pulled;
    }

    /** One reservation found on a document. */
    public record Reservation(Object documentId, Object operationId, String nonce) {
    }

    /**
     * The reservations carried by documents of {@code collection}, at most {@code limit} documents' worth: an indexed
     * query (see {@link #ensureIndex}) that returns only documents with an operation in flight, for a maintenance step
     * that releases the reservations of operations no longer in flight (left by an owner that died between a late
     * reservation and its ownership check).
     */
    public static List<Reservation> reservations(MongoCollection<Document> collection, EffectMarker marker,
                                                 int limit) {
        List<Reservation> found = new ArrayList<>();
        java.util.Set<Object> seen = new java.util.HashSet<>();
        String path = marker.reservedField() + "." + EffectMarker.OPERATION;
        for (Document d : collection.withReadPreference(ReadPreference.primary())
                .find(com.mongodb.client.model.Filters.exists(path))
                .projection(com.mongodb.client.model.Projections.include(marker.reservedField())).limit(limit)) {
            // read back from a collection users write: an entry that is not one this kit writes is left alone (and
            // never reaches a filter), whatever it holds
            if (!(d.get(marker.reservedField()) instanceof List<?> entries)
                    || !seen.add(Ids.idKey(d.get("_id"), collection.getCodecRegistry()))) {
                continue;   // each document once: an unsorted scan of several batches repeats some on DocumentDB
            }
            for (Object e : entries) {
                if (e instanceof Document entry && Ids.isOperationId(entry.get(EffectMarker.OPERATION))
                        && Ids.isDocumentId(d.get("_id"))) {
                    found.add(new Reservation(d.get("_id"), entry.get(EffectMarker.OPERATION),
                            entry.get(EffectMarker.NONCE) instanceof String n ? n : ""));
                }
            }
        }
        return found;
    }

    /** Creates the sparse index {@link #reservations} and {@link #release} use on {@code collection}. */
    public static void ensureIndex(MongoCollection<Document> collection, EffectMarker marker) {
        collection.createIndex(com.mongodb.client.model.Indexes.ascending(marker.reservedField() + "."
                + EffectMarker.OPERATION), new com.mongodb.client.model.IndexOptions()
                .name(marker.reservedField() + "_operation").sparse(true));
    }

    /**
     * The nonce of an attempt made by {@code owner} under fencing token {@code token}. Tokens only grow within one
     * operation's record, so of two attempts of one record the one with the larger token is the later owner: see
     * {@link #tokenOf}.
     */
    public static String nonce(String owner, long token) {
        return Objects.requireNonNull(owner, "owner") + "/" + token;
    }

    /** The fencing token a nonce made by {@link #nonce} carries; 0 for any other nonce. */
    public static long tokenOf(String nonce) {
        int slash = nonce == null ? -1 : nonce.lastIndexOf('/');
        try {
            return slash < 0 ? 0L : Long.parseLong(nonce.substring(slash + 1));
        } catch (NumberFormatException e) {
            return 0L;
        }
    }

    /** The reservation entry, fields in a fixed order. */
    public static Document entry(Object operationId, String nonce) {
        return new Document(EffectMarker.OPERATION, operationId).append(EffectMarker.NONCE, nonce);
    }

    private static Bson reserveFilter(EffectMarker marker, Object operationId, MarkerWrite w) {
        List<Bson> filters = new ArrayList<>();
        filters.add(eq("_id", w.id()));
        filters.add(ne(marker.reservedField() + "." + EffectMarker.OPERATION, operationId));
        filters.add(ne(marker.appliedField(), operationId));
        if (w.guard() != null) {
            filters.add(w.guard());
        }
        return and(filters);
    }

    private static void check(Object operationId, String nonce, List<MarkerWrite> writes) {
        Ids.operationId(null, "operationId", operationId);
        Objects.requireNonNull(nonce, "nonce");
        if (writes.isEmpty()) {
            throw new IllegalArgumentException("no writes");
        }
        if (writes.stream().map(w -> Ids.idKey(w.id())).distinct().count() != writes.size()) {
            throw new IllegalArgumentException("two writes name the same document: " + writes);
        }
    }

    private static Map<Object, GuardedResult> write(MongoCollection<Document> collection, List<MarkerWrite> writes,
                                                    Function<MarkerWrite, Bson> filter,
                                                    Function<MarkerWrite, Bson> update,
                                                    Function<Document, UpdateOutcome> classify) {
        long matched = send(collection, writes, filter, update);
        return ConditionalUpdates.classifyAll(collection, writes, (int) matched, classify);
    }

    /**
     * Tries each document's write in its tidy form first (it takes the array's last entry: it unsets the array), then,
     * for the documents that carry other operations' entries too, in its plain form (it pulls the entry). The two
     * forms' filters both require the entry, so at most one of them applies on each document. The other entries may
     * have gone between the two: then the pull emptied the array, and a third write removes it where it is still
     * empty. One round trip when nothing else is in flight on the documents, three otherwise.
     */
    private static Map<Object, GuardedResult> tidyWrite(MongoCollection<Document> collection,
                                                        List<MarkerWrite> writes, String array,
                                                        Function<MarkerWrite, Bson> soleFilter,
                                                        Function<MarkerWrite, Bson> soleUpdate,
                                                        Function<MarkerWrite, Bson> filter,
                                                        Function<MarkerWrite, Bson> update,
                                                        Function<Document, UpdateOutcome> classify) {
        long matched = send(collection, writes, soleFilter, soleUpdate);
        if (matched < writes.size()) {
            long pulled = send(collection, writes, filter, update);
            matched += pulled;
            if (pulled > 0) {
                removeIfEmpty(collection, writes.stream().map(MarkerWrite::id).toList(), array);
            }
        }
        return ConditionalUpdates.classifyAll(collection, writes, (int) matched, classify);
    }

    /** The other entries may have gone between a tidy write and a pull: remove the array where the pull emptied it. */
    private static void removeIfEmpty(MongoCollection<Document> collection, List<?> ids, String array) {
        collection.updateMany(and(ids.size() == 1 ? eq("_id", ids.get(0)) : in("_id", ids), size(array, 0)),
                Updates.unset(array));
    }

    private static long send(MongoCollection<Document> collection, List<MarkerWrite> writes,
                             Function<MarkerWrite, Bson> filter, Function<MarkerWrite, Bson> update) {
        if (writes.size() == 1) {
            MarkerWrite w = writes.get(0);
            return collection.updateOne(filter.apply(w), update.apply(w)).getMatchedCount();
        }
        List<WriteModel<Document>> models = new ArrayList<>();
        for (MarkerWrite w : inLockOrder(writes)) {
            models.add(new UpdateOneModel<>(filter.apply(w), update.apply(w)));
        }
        return collection.bulkWrite(models, new BulkWriteOptions().ordered(false)).getMatchedCount();
    }

    /**
     * The writes in one order every process agrees on (by the id's BSON type, then its JSON form), whatever order the
     * caller listed them in. A server that runs a batch in one transaction locks its documents in the batch's order
     * (DocumentDB on PostgreSQL does); two batches over the same documents in opposite orders can then deadlock, and
     * one order for all removes that. Which document is written first changes nothing else: the writes are
     * independent.
     */
    static List<MarkerWrite> inLockOrder(List<MarkerWrite> writes) {
        List<MarkerWrite> ordered = new ArrayList<>(writes);
        ordered.sort(java.util.Comparator.comparing(w -> lockKey(w.id())));
        return ordered;
    }

    private static String lockKey(Object id) {
        org.bson.BsonValue key = Ids.idKey(id);
        return String.format("%02d", key.getBsonType().getValue())
                + new org.bson.BsonDocument("k", key).toJson(org.bson.json.JsonWriterSettings.builder()
                .outputMode(org.bson.json.JsonMode.EXTENDED).build());
    }

    private static Document reread(MongoCollection<Document> collection, Object id) {
        return ConditionalUpdates.reread(collection, id);
    }
}
