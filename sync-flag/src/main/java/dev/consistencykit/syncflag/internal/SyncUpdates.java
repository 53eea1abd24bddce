package dev.consistencykit.syncflag.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.ne;
import static com.mongodb.client.model.Filters.not;
import static com.mongodb.client.model.Filters.or;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.MongoServerException;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.PushOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.Inputs;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.OutcomeUnknownException;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.syncflag.MasterMissingException;
import dev.consistencykit.syncflag.SyncFlagConfig;
import dev.consistencykit.syncflag.SyncFlagListener.Source;
import dev.consistencykit.syncflag.SyncFlagListener;
import dev.consistencykit.syncflag.UpdateRejectedException;

/**
 * The protocol of an update: the master's change, its version and its flag in one write, then propagation.
 */
public abstract class SyncUpdates extends SyncPropagation {

    SyncUpdates(SyncFlagConfig config, MongoDatabase database, ServerClock clock, SyncFlagListener listener) {
        super(config, database, clock, listener);
    }

    // ---------------------------------------------------------------- update

    /** Records the update on its master (one atomic write) and returns its id. */
    public OperationId submit(Prepared p) {
        record(p);
        return p.id();
    }

    /** Records the update and propagates it in this thread. */
    public OperationResult apply(Prepared p) {
        Recorded r = record(p);
        Document flag = r.master().get(FLAG, Document.class);
        if (flag == null) {
            // nothing to propagate: the update left the copies alone, or its propagation already finished
            return OperationResult.committed(p.id(), SYNCED);
        }
        if (!Objects.equals(flag.get("op"), p.id().value()) && !r.fresh()) {
            // a newer update flagged the master after ours: its propagation copies our value or a newer one
            return OperationResult.committed(p.id(), SYNCED);
        }
        propagate(r.master(), Source.UPDATE);
        return OperationResult.committed(p.id(), SYNCED);
    }

    /** A resync of {@code masterId}: bumps its version, flags it and propagates its current values. */
    public long resync(Object masterId) {
        Object id = Inputs.documentId(config.name(), "masterId", masterId, masters.getCodecRegistry());
        Prepared p = new Prepared(OperationId.random(), id, new BsonDocument(), true, RESYNC_FINGERPRINT);
        Recorded r = record(p);
        return propagate(r.master(), Source.RESYNC).written();
    }

    Recorded record(Prepared p) {
        Object opId = p.id().value();
        List<Bson> parts = new ArrayList<>();
        if (!p.update().isEmpty()) {
            parts.add(p.update());
        }
        if (p.touchesCopies()) {
            parts.add(Updates.inc(VERSION, 1L));
            parts.add(Updates.set(FLAG_OP, opId));
            parts.add(Updates.currentDate(FLAG_AT));
        }
        parts.add(Updates.pushEach(OPS, List.of(new Document("id", opId).append("h", p.fingerprint())),
                new PushOptions().slice(-config.rememberedUpdates())));
        Bson update = Updates.combine(parts);
        // the guard makes a retried or repeated update a no-op: the master remembers the ids it applied
        Bson filter = and(eq("_id", p.masterId()), ne(OPS + ".id", opId));
        FindOneAndUpdateOptions options = new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER)
                .projection(masterProjection);
        for (int attempt = 1; attempt <= RECORD_ATTEMPTS; attempt++) {
            Document after;
            try {
                after = config.retryPolicy().execute(config.name(), p.masterId(), "update master",
                        () -> masters.findOneAndUpdate(filter, update, options));
            } catch (MongoServerException e) {
                // not transient (the retry policy rethrows only those): the server refused the update, so it
                // did not apply
                throw new UpdateRejectedException(config.name(), p.masterId(), e);
            }
            if (after != null) {
                updates.increment();
                long version = versionOf(after);
                LOG.debug("[{}] updated master {} (op {}, version {}, flagged {})", config.name(), p.masterId(), opId,
                        version, p.touchesCopies());
                notify(() -> listener.onMasterUpdated(p.id(), p.masterId(), version, p.touchesCopies()));
                return new Recorded(after, true);
            }
            Document existing = config.retryPolicy().execute(config.name(), p.masterId(), "read master",
                    () -> masters.find(eq("_id", p.masterId()))
                            .projection(Projections.fields(masterProjection, Projections.include(OPS))).first());
            if (existing == null) {
                throw new MasterMissingException(config.name(), config.masterCollection(), p.masterId());
            }
            for (Document op : existing.getList(OPS, Document.class, List.of())) {
                if (Objects.equals(op.get("id"), opId)) {
                    if (!p.fingerprint().equals(op.getString("h"))) {
                        throw new IdempotencyConflictException(config.name(), opId, "operation " + opId
                                + " was applied to master " + p.masterId() + " with another update; nothing was"
                                + " written");
                    }
                    existing.remove(OPS);
                    return new Recorded(existing, false);
                }
            }
            // neither applied nor remembered: our id was pushed out of the remembered window between the write and
            // the read (many updates in between), or the write raced; try again
            LOG.debug("[{}] update of master {} matched nothing and op {} is not remembered; attempt {}",
                    config.name(), p.masterId(), opId, attempt);
        }
        throw new OutcomeUnknownException(config.name(), p.masterId(), "update of master " + p.masterId()
                + " matched nothing and its operation " + opId + " is not among the master's remembered updates;"
                + " raise rememberedUpdates", null);
    }
}
