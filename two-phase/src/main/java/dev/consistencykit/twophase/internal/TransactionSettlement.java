package dev.consistencykit.twophase.internal;

import static dev.consistencykit.twophase.internal.TransactionSchema.P_COMMIT;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_ID;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_ROLLBACK;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.bson.Document;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;

import dev.consistencykit.core.spi.GuardedResult;
import dev.consistencykit.core.spi.Listeners;
import dev.consistencykit.core.spi.MarkerWrite;
import dev.consistencykit.core.spi.OnceEffects;
import dev.consistencykit.core.spi.UpdateOutcome;
import dev.consistencykit.twophase.CommitStuckException;
import dev.consistencykit.twophase.TwoPhaseConfig;
import dev.consistencykit.twophase.TwoPhaseListener;

/**
 * Settling participants once the transaction is decided: every commit update (a participant that refuses it is
 * reported stuck, not retried forever), or every rollback.
 */
final class TransactionSettlement {

    private static final Logger LOG = LoggerFactory.getLogger(TransactionSettlement.class);

    private final TwoPhaseConfig config;
    private final TransactionStore store;
    private final TransactionParticipants participants;
    private final TransactionCounters counters;
    private final TwoPhaseListener listener;

    /** The settlement of a decided transaction, through the store, on the participants. */
    TransactionSettlement(TwoPhaseConfig config, TransactionStore store, TransactionParticipants participants,
                          TransactionCounters counters, TwoPhaseListener listener) {
        this.config = config;
        this.store = store;
        this.participants = participants;
        this.counters = counters;
        this.listener = listener;
    }

    void commitAll(EncodedTransaction tx, long token) {
        for (Map.Entry<String, List<Integer>> group : participants.byCollection(tx).entrySet()) {
            MongoCollection<Document> collection = store.participants(group.getKey());
            List<MarkerWrite> writes = new ArrayList<>();
            Map<Object, List<Object>> commits = new HashMap<>();
            for (int i : group.getValue()) {
                Document p = tx.participants().get(i);
                // credits from other transactions since the prepare may have brought the field nearer the edge: the
                // commit is refused rather than wrapped (the embedded server) or refused raw (MongoDB)
                // (and a field its prepare found a plain number may have been given an array or a NaN since): a
                // commit that cannot add is refused by its guard, reported as stuck, never applied in part
                List<Object> commit = p.getList(P_COMMIT, Object.class);
                commits.put(p.get(P_ID), commit);
                Bson operands = SpecCodec.operandGuard(commit);
                Bson overflow = SpecCodec.overflowGuard(commit);
                writes.add(new MarkerWrite(p.get(P_ID), operands == null ? overflow : overflow == null ? operands
                        : Filters.and(operands, overflow), SpecCodec.decodeUpdate(commit)));
            }
            Map<Object, GuardedResult> results;
            try {
                results = config.retryPolicy().execute(config.name(), tx.id(), "commit " + group.getKey(),
                        () -> OnceEffects.settle(collection, store.marker(), tx.id(), writes));
            } catch (MongoBulkWriteException | MongoWriteException | MongoCommandException e) {
                stuck(tx, token, group.getKey(), e.getMessage(), e);
                return;
            }
            for (Map.Entry<Object, GuardedResult> r : results.entrySet()) {
                if (r.getValue().outcome() == UpdateOutcome.GUARD_FAILED) {
                    List<Object> commit = commits.get(r.getKey());
                    String why = r.getValue().document().flatMap(d -> SpecCodec.operandOf(commit, d))
                            .orElse("it would take a field past the range of a 64-bit integer");
                    stuck(tx, token, group.getKey(), "the commit update of " + r.getKey() + " was refused: " + why,
                            null);
                }
            }
        }
    }

    void stuck(EncodedTransaction tx, long token, String collection, String error, MongoException e) {
        counters.commitStuck.increment();
        LOG.warn("[{}] the server refused a commit update of transaction {} on {}: {}", config.name(), tx.id(),
                collection, error);
        store.noteStuck(tx.id(), token, collection, error);
        Listeners.call(config.name(), () -> listener.onCommitStuck(tx.operationId(), collection, error));
        throw new CommitStuckException(config.name(), tx.id(), "transaction " + tx.id() + " is committed but the"
                + " server refused a commit update on " + collection + "; recovery will retry it: " + error, e);
    }

    /**
     * Rollback: first release every reservation of the transaction (any attempt's), so that no prepare can apply
     * after this point, then settle the participants it was applied to with their rollback update.
     */
    void rollbackAll(EncodedTransaction tx) {
        for (Map.Entry<String, List<Integer>> group : participants.byCollection(tx).entrySet()) {
            MongoCollection<Document> collection = store.participants(group.getKey());
            List<Object> ids = new ArrayList<>();
            List<MarkerWrite> writes = new ArrayList<>();
            for (int i : group.getValue()) {
                Document p = tx.participants().get(i);
                ids.add(p.get(P_ID));
                writes.add(MarkerWrite.of(p.get(P_ID), SpecCodec.decodeUpdate(p.getList(P_ROLLBACK,
                        Object.class))));
            }
            config.retryPolicy().run(config.name(), tx.id(), "release " + group.getKey(),
                    () -> OnceEffects.release(collection, store.marker(), tx.id(), null, ids));
            config.retryPolicy().execute(config.name(), tx.id(), "roll back " + group.getKey(),
                    () -> OnceEffects.settle(collection, store.marker(), tx.id(), writes));
        }
    }
}
