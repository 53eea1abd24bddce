package dev.consistencykit.core.spi;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.or;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.ReadPreference;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.ServerClock;

/**
 * Guarded single-document updates, in the style of the driver's {@code Filters} and {@code Updates}: each is
 * one request, idempotent, and returns a typed {@link UpdateOutcome} decided by re-reading the document
 * whenever the guard did not match (so the common path costs one round trip).
 *
 * Effects applied at most once on documents an operation does not own are {@link OnceEffects}.
 *
 * <ul>
 *   <li>{@link #transition}: compare-and-set on a state field, stamping {@code lastModified} with server time;</li>
 *   <li>{@link #claim} / {@link #fenced} / {@link #renew} / {@link #release}: leases with a fencing token that
 *       grows on every claim, so a paused owner whose lease was taken over can no longer write;</li>
 *   <li>{@link #delete}: a guarded delete of one document that a concurrent update cannot turn into a no-op.</li>
 * </ul>
 *
 * <p>Every {@code findOneAndUpdate} sets {@code returnDocument} explicitly. Re-reads go to the primary.
 * Stateless and thread-safe. None of these methods retries: wrap them in a {@link RetryPolicy}, which is safe
 * because each is idempotent.
 */
public final class ConditionalUpdates {

    private ConditionalUpdates() {
    }

    /**
     * Moves document {@code id} from one of {@code transition.from()} to {@code transition.to()} in one
     * {@code findOneAndUpdate} (one {@code updateOne} for a transition {@link Transition#returningNothing()}),
     * stamping the last-modified field with the server's time.
     *
     * @return {@link UpdateOutcome#APPLIED} with the document after the change (none for a transition returning
     *         nothing); {@code ALREADY_APPLIED} if the document is already in the target state;
     *         {@code GUARD_FAILED} with the current document if it is in another state or the extra guard refused;
     *         {@code MISSING} if there is no such document
     */
    public static GuardedResult transition(MongoCollection<Document> collection, Object id, Transition transition) {
        Objects.requireNonNull(transition, "transition");
        Ids.documentId(null, "id", id);
        List<Bson> filters = new ArrayList<>();
        filters.add(eq("_id", id));
        filters.add(transition.from().size() == 1 ? eq(transition.stateField(), transition.from().get(0))
                : in(transition.stateField(), transition.from()));
        transition.guard().ifPresent(filters::add);
        List<Bson> updates = new ArrayList<>();
        updates.add(Updates.set(transition.stateField(), transition.to()));
        updates.add(Updates.currentDate(transition.lastModifiedField()));
        transition.update().ifPresent(updates::add);
        if (!transition.returnsDocument()) {
            if (collection.updateOne(and(filters), Updates.combine(updates)).getMatchedCount() == 1) {
                return GuardedResult.of(UpdateOutcome.APPLIED, null);
            }
        } else {
            FindOneAndUpdateOptions options = new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER)
                    .upsert(false);
            transition.projection().ifPresent(p -> options.projection(
                    Projections.fields(p, Projections.include(transition.stateField()))));
            Document after = collection.findOneAndUpdate(and(filters), Updates.combine(updates), options);
            if (after != null) {
                return GuardedResult.of(UpdateOutcome.APPLIED, after);
            }
        }
        Document current = reread(collection, id);
        if (current == null) {
            return GuardedResult.of(UpdateOutcome.MISSING, null);
        }
        if (transition.to().equals(current.get(transition.stateField()))) {
            return GuardedResult.of(UpdateOutcome.ALREADY_APPLIED, current);
        }
        return GuardedResult.of(UpdateOutcome.GUARD_FAILED, current);
    }

    static Map<Object, GuardedResult> classifyAll(MongoCollection<Document> collection,
            List<MarkerWrite> writes, int matched, Function<Document, UpdateOutcome> classify) {
        // keyed as the server tells ids apart: {b: 2, a: 1} and {a: 1, b: 2} are two documents, one Java key
        Map<Object, GuardedResult> results = Ids.idMap(collection.getCodecRegistry());
        if (matched == writes.size()) {
            for (MarkerWrite w : writes) {
                results.put(w.id(), GuardedResult.of(UpdateOutcome.APPLIED, null));
            }
            return results;
        }
        // keyed by MongoDB's equality of ids: the id read back may be another Java type than the one written
        // (an Integer for a Long, a Document for an encoded BsonDocument, a Binary for a UUID)
        Map<Object, Document> current = new HashMap<>();
        collection.withReadPreference(ReadPreference.primary())
                .find(in("_id", writes.stream().map(MarkerWrite::id).toList()))
                .forEach(d -> current.put(Ids.idKey(d.get("_id"), collection.getCodecRegistry()), d));
        for (MarkerWrite w : writes) {
            Document d = current.get(Ids.idKey(w.id(), collection.getCodecRegistry()));
            results.put(w.id(), d == null ? GuardedResult.of(UpdateOutcome.MISSING, null)
                    : GuardedResult.of(classify.apply(d), d));
        }
        return results;
    }

    /**
     * Claims the first document (in {@code sort} order) that matches {@code filter} and whose lease is free or
     * expired by server time, in one {@code findOneAndUpdate}: sets the owner, a lease expiry of server time +
     * {@code lease}, increments the fencing token, stamps {@code lastModified}, and applies {@code extraUpdate}.
     *
     * @param sort        the claim order, or {@code null}
     * @param extraUpdate an update applied in the same write (a state change), or {@code null}
     * @return the claim, or empty if nothing is claimable
     */
    public static Optional<Claim> claim(MongoCollection<Document> collection, Bson filter, Bson sort, String owner,
                                        Duration lease, ServerClock clock, LeaseFields fields, Bson extraUpdate) {
        Objects.requireNonNull(filter, "filter");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(fields, "fields");
        requirePositive(lease);
        Instant now = clock.now();
        Instant expires = now.plus(lease);
        Bson claimable = and(filter, or(eq(fields.expiresField(), null), lt(fields.expiresField(), Date.from(now))));
        List<Bson> updates = new ArrayList<>();
        updates.add(Updates.set(fields.ownerField(), owner));
        updates.add(Updates.set(fields.expiresField(), Date.from(expires)));
        updates.add(Updates.inc(fields.tokenField(), 1L));
        updates.add(Updates.currentDate(Transition.DEFAULT_LAST_MODIFIED_FIELD));
        if (extraUpdate != null) {
            updates.add(extraUpdate);
        }
        FindOneAndUpdateOptions options = new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER)
                .upsert(false);
        if (sort != null) {
            options.sort(sort);
        }
        Document after = collection.findOneAndUpdate(claimable, Updates.combine(updates), options);
        if (after == null) {
            return Optional.empty();
        }
        return Optional.of(new Claim(after.get("_id"), owner, tokenOf(after, fields), expires, after));
    }

    /**
     * The claim {@code owner} already holds among the documents {@code filter} matches, read from the primary: what a
     * claim retried after a lost reply must look for before claiming again, or the document its first attempt claimed
     * stays leased to an owner that never works on it until the lease runs out.
     *
     * @param filter narrows the search to what the caller claims (a state, so that an index serves it)
     * @return the claim, or empty if {@code owner} holds none
     */
    public static Optional<Claim> heldBy(MongoCollection<Document> collection, Bson filter, String owner,
                                         LeaseFields fields) {
        Objects.requireNonNull(owner, "owner");
        Document held = collection.withReadPreference(com.mongodb.ReadPreference.primary())
                .find(and(filter, eq(fields.ownerField(), owner))).first();
        if (held == null || !(held.get(fields.expiresField()) instanceof Date expires)) {
            return Optional.empty();
        }
        return Optional.of(new Claim(held.get("_id"), owner, tokenOf(held, fields), expires.toInstant(), held));
    }

    /**
     * Applies {@code update} to document {@code id} only if its fencing token is still {@code token}, i.e. no
     * other process has claimed it since.
     *
     * @param guard an extra filter, or {@code null}
     * @return {@code APPLIED} with the document after the change; {@code GUARD_FAILED} with the current document
     *         if the token moved on (lease lost) or the guard refused; {@code MISSING}
     */
    public static GuardedResult fenced(MongoCollection<Document> collection, Object id, LeaseFields fields,
                                       long token, Bson guard, Bson update) {
        Ids.documentId(null, "id", id);
        Objects.requireNonNull(update, "update");
        List<Bson> filters = new ArrayList<>();
        filters.add(eq("_id", id));
        filters.add(eq(fields.tokenField(), token));
        if (guard != null) {
            filters.add(guard);
        }
        Document after = collection.findOneAndUpdate(and(filters),
                Updates.combine(update, Updates.currentDate(Transition.DEFAULT_LAST_MODIFIED_FIELD)),
                new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER).upsert(false));
        if (after != null) {
            return GuardedResult.of(UpdateOutcome.APPLIED, after);
        }
        Document current = reread(collection, id);
        return GuardedResult.of(current == null ? UpdateOutcome.MISSING : UpdateOutcome.GUARD_FAILED, current);
    }

    /** Extends the lease of the holder of {@code token} to server time + {@code lease} (a heartbeat). */
    public static GuardedResult renew(MongoCollection<Document> collection, Object id, LeaseFields fields, long token,
                                      Duration lease, ServerClock clock) {
        requirePositive(lease);
        return fenced(collection, id, fields, token, null,
                Updates.set(fields.expiresField(), Date.from(clock.now().plus(lease))));
    }

    /**
     * Gives up the lease of the holder of {@code token}: unsets owner and expiry (the token stays, so the next
     * claim gets a larger one) and applies {@code extraUpdate}.
     */
    public static GuardedResult release(MongoCollection<Document> collection, Object id, LeaseFields fields,
                                        long token, Bson extraUpdate) {
        List<Bson> updates = new ArrayList<>();
        updates.add(Updates.unset(fields.ownerField()));
        updates.add(Updates.unset(fields.expiresField()));
        if (extraUpdate != null) {
            updates.add(extraUpdate);
        }
        return fenced(collection, id, fields, token, null, Updates.combine(updates));
    }

    /**
     * Deletes document {@code id} of {@code collection} if it also matches {@code guard} (none: {@code null}); how many
     * it deleted, 0 or 1. Every delete of one known document in this library is this one.
     *
     * <p>It is sent as a delete of every match, which on an {@code _id} is that one document, and never as a
     * {@code deleteOne} or {@code findOneAndDelete}: the real engine runs those as a locking read of the row, then a
     * delete of the row at the address that read found. When an update of the document commits between the two, the
     * row has moved, the delete finds nothing there and reports nothing deleted, though the updated document still
     * matches; on the real engine that was 3 to 10% of such races, and 40 to 55% on its sharded form
     * (docs/servers.md, "Deletes of one document"). A delete of every match checks the updated row again, as
     * MongoDB's delete does. Not retried: a retry after a lost reply finds nothing to delete, and reports 0.
     */
    public static long delete(MongoCollection<?> collection, Object id, Bson guard) {
        return collection.deleteMany(guard == null ? eq("_id", id) : and(eq("_id", id), guard)).getDeletedCount();
    }

    /** The fencing token stored in {@code document}, 0 if none. */
    public static long tokenOf(Document document, LeaseFields fields) {
        return Values.at(document, fields.tokenField()) instanceof Number n ? n.longValue() : 0L;
    }

    static Document reread(MongoCollection<Document> collection, Object id) {
        return collection.withReadPreference(ReadPreference.primary()).find(eq("_id", id)).first();
    }

    private static void requirePositive(Duration lease) {
        Checks.positive("lease", lease);
    }
}
