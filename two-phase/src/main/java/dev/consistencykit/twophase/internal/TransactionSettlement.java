package dev.consistencykit.twophase.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import org.bson.Document;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.GuardedResult;
import dev.consistencykit.core.MarkerWrite;
import dev.consistencykit.core.OnceEffects;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.UpdateOutcome;
import dev.consistencykit.twophase.CommitStuckException;
import dev.consistencykit.twophase.TwoPhaseConfig;
import dev.consistencykit.twophase.TwoPhaseListener;

/**
 * Settling participants once the transaction is decided: every commit update (a participant that refuses it is
 * reported stuck, not retried forever), or every rollback.
 */
public abstract class TransactionSettlement extends TransactionParticipants {

    TransactionSettlement(TwoPhaseConfig config, MongoDatabase database, ServerClock clock,
                             TwoPhaseListener listener, Supplier<String> ownerIds) {
        super(config, database, clock, listener, ownerIds);
    }

    void commitAll(Encoded tx, long token) {
        for (Map.Entry<String, List<Integer>> group : byCollection(tx).entrySet()) {
            MongoCollection<Document> collection = participants(group.getKey());
            List<MarkerWrite> writes = new ArrayList<>();
            for (int i : group.getValue()) {
                Document p = tx.participants().get(i);
                // credits from other transactions since the prepare may have brought the field nearer the edge: the
                // commit is refused rather than wrapped (the embedded server) or refused raw (MongoDB)
                List<Object> commit = p.getList(P_COMMIT, Object.class);
                writes.add(new MarkerWrite(p.get(P_ID), SpecCodec.overflowGuard(commit),
                        SpecCodec.decodeUpdate(commit)));
            }
            Map<Object, GuardedResult> results;
            try {
                results = config.retryPolicy().execute(config.name(), tx.id(), "commit " + group.getKey(),
                        () -> OnceEffects.settle(collection, marker, tx.id(), writes));
            } catch (MongoBulkWriteException | MongoWriteException e) {
                stuck(tx, token, group.getKey(), e.getMessage(), e);
                return;
            }
            for (Map.Entry<Object, GuardedResult> r : results.entrySet()) {
                if (r.getValue().outcome() == UpdateOutcome.GUARD_FAILED) {
                    stuck(tx, token, group.getKey(), "the commit update of " + r.getKey() + " would take a field"
                            + " past the range of a 64-bit integer", null);
                }
            }
        }
    }

    void stuck(Encoded tx, long token, String collection, String error, MongoException e) {
        commitStuck.increment();
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
    void rollbackAll(Encoded tx) {
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
}
