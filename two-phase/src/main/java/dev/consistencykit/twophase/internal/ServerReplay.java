package dev.consistencykit.twophase.internal;

import java.util.Date;
import java.util.List;
import java.util.Optional;

import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonValue;
import org.bson.types.ObjectId;

import com.mongodb.MongoException;

import dev.consistencykit.core.spi.MongoErrors;

/**
 * Applies a stored participant update to a copy of a document <em>on the server</em>, so that a reader sees the
 * document exactly as the server will leave it once a transaction in flight on it settles: every operator, numeric
 * type, rounding, comparison and array rule is the server's own, because the server computes it. Nothing of MongoDB's
 * update semantics is re-implemented in Java.
 *
 * <p>The copy goes into a scratch collection beside the transactions collection, under a fresh {@link ObjectId}:
 * inserted, updated with {@code findOneAndUpdate} returning the result, deleted (three commands), and only for a
 * read that races a transaction applied on some of its participants and not others. A reader that dies between the
 * insert and the delete leaves its copy behind; {@link #sweep} (run by prune) removes copies older than an hour by
 * their id's time, which decides nothing but when garbage goes.
 *
 * <p>Answers "cannot replay" for {@code $currentDate} (its value is the server's time at the commit, which no replay
 * knows) and for an update the server refuses on the copy (the commit would be refused the same way, so the document
 * will not look like anything the reader could be told).
 */
final class ServerReplay {

    /** Stored op of the value only the committing write's server time gives. */
    private static final String CURRENT_DATE = "currentDate";
    /** How old a copy left by a dead reader is before prune deletes it. */
    static final java.time.Duration ABANDONED_AFTER = java.time.Duration.ofHours(1);

    private final TransactionStore store;

    /** Replays through the store's scratch collection, which nothing else uses. */
    ServerReplay(TransactionStore store) {
        this.store = store;
    }

    /**
     * Applies {@code ops} to {@code document} in place, on the server.
     *
     * @return empty when done; otherwise why the update cannot be replayed ({@code document} is then unchanged)
     */
    Optional<String> apply(BsonDocument document, List<BsonValue> ops) {
        if (ops.isEmpty()) {
            return Optional.empty();
        }
        for (BsonValue o : ops) {
            if (!o.isDocument() || !o.asDocument().isString("op") || !o.asDocument().isString("path")) {
                return Optional.of("a stored update is malformed");
            }
            String op = o.asDocument().getString("op").getValue();
            if (!SpecCodec.UPDATE_OPERATORS.contains(op)) {
                return Optional.of("a stored update names an unknown operator");
            }
            if (op.equals(CURRENT_DATE)) {
                return Optional.of("$currentDate of " + o.asDocument().getString("path").getValue()
                        + " has a value only the committing write's server knows");
            }
        }
        BsonDocument update = new BsonDocument();
        for (BsonValue o : ops) {
            String op = "$" + o.asDocument().getString("op").getValue();
            BsonValue value = o.asDocument().get("value", BsonNull.VALUE);
            if (!update.containsKey(op)) {
                update.put(op, new BsonDocument());
            }
            update.getDocument(op).put(o.asDocument().getString("path").getValue(), value);
        }
        BsonValue id = document.get("_id");
        ObjectId scratchId = new ObjectId();
        BsonDocument copy = document.clone();
        copy.put("_id", new BsonObjectId(scratchId));
        try {
            store.insertCopy(copy);
            BsonDocument after;
            try {
                after = store.updateCopy(scratchId, update);
            } catch (MongoException e) {
                if (MongoErrors.isTransient(e)) {
                    throw e;
                }
                return Optional.of("the server refuses it on a copy of the document (code " + e.getCode() + ")");
            }
            if (after == null) {
                return Optional.of("the copy vanished from " + store.scratchName());
            }
            document.clear();
            if (id != null) {
                document.put("_id", id);
            }
            after.forEach((k, v) -> {
                if (!k.equals("_id")) {
                    document.put(k, v);
                }
            });
            return Optional.empty();
        } finally {
            store.deleteCopy(scratchId);
        }
    }

    /**
     * Deletes the copies made before {@code before} (left by readers that died between insert and delete), in one
     * delete. A copy's time is its id's, which decides only when garbage goes.
     */
    long sweep(Date before) {
        ObjectId oldest = new ObjectId(String.format("%08x", before.getTime() / 1000) + "0".repeat(16));
        return store.deleteCopiesBefore(oldest);
    }
}
