package dev.consistencykit.syncflag.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.elemMatch;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.ne;
import static com.mongodb.client.model.Filters.not;
import static com.mongodb.client.model.Filters.or;
import static dev.consistencykit.syncflag.internal.SyncFields.FLAG;
import static dev.consistencykit.syncflag.internal.SyncFields.FLAG_AT;
import static dev.consistencykit.syncflag.internal.SyncFields.FLAG_OP;
import static dev.consistencykit.syncflag.internal.SyncFields.LOG;
import static dev.consistencykit.syncflag.internal.SyncFields.OPS;
import static dev.consistencykit.syncflag.internal.SyncFields.RECORD_ATTEMPTS;
import static dev.consistencykit.syncflag.internal.SyncFields.RESYNC_FINGERPRINT;
import static dev.consistencykit.syncflag.internal.SyncFields.SYNCED;
import static dev.consistencykit.syncflag.internal.SyncFields.VERSION;
import static dev.consistencykit.syncflag.internal.SyncFields.valueAt;
import static dev.consistencykit.syncflag.internal.SyncFields.versionOf;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.MongoServerException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.PushOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.OutcomeUnknownException;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.syncflag.MasterMissingException;
import dev.consistencykit.syncflag.SyncFlagConfig;
import dev.consistencykit.syncflag.SyncFlagListener.Source;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.syncflag.UpdateRejectedException;
import dev.consistencykit.syncflag.internal.SyncEngine.Prepared;
import dev.consistencykit.syncflag.internal.SyncFields.Recorded;
import dev.consistencykit.syncflag.internal.SyncFields.Value;

/**
 * The protocol of an update: the master's change, its version and its flag in one write, then propagation.
 */
final class SyncUpdates {

    private final SyncFields fields;
    private final SyncFlagConfig config;
    private final SyncPropagation propagation;

    /** The updates of a master, over the shared fields and the propagation that follows them. */
    SyncUpdates(SyncFields fields, SyncPropagation propagation) {
        this.fields = fields;
        this.config = fields.config;
        this.propagation = propagation;
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
        propagation.propagate(r.master(), Source.UPDATE);
        return OperationResult.committed(p.id(), SYNCED);
    }

    /** A resync of {@code masterId}: bumps its version, flags it and propagates its current values. */
    public long resync(Object masterId) {
        Object id = Ids.documentId(config.name(), "masterId", masterId, fields.masters.getCodecRegistry());
        Prepared p = new Prepared(OperationId.random(), id, new BsonDocument(), true, RESYNC_FINGERPRINT);
        Recorded r = record(p);
        return propagation.propagate(r.master(), Source.RESYNC).written();
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
                .projection(fields.masterProjection);
        for (int attempt = 1; attempt <= RECORD_ATTEMPTS; attempt++) {
            Document after;
            try {
                after = config.retryPolicy().execute(config.name(), p.masterId(), "update master",
                        () -> fields.masters.findOneAndUpdate(filter, update, options));
            } catch (MongoServerException e) {
                // not transient (the retry policy rethrows only those): the server refused the update, so it
                // did not apply
                throw new UpdateRejectedException(config.name(), p.masterId(), e);
            }
            if (after != null) {
                fields.updates.increment();
                if (p.touchesCopies() && versionOf(after) == 1) {
                    after = aboveEarlierCopies(p.masterId(), after);
                }
                long version = versionOf(after);
                LOG.debug("[{}] updated master {} (op {}, version {}, flagged {})", config.name(), p.masterId(), opId,
                        version, p.touchesCopies());
                fields.notify(() -> fields.listener.onMasterUpdated(p.id(), p.masterId(), version, p.touchesCopies()));
                return new Recorded(after, true);
            }
            Document existing = config.retryPolicy().execute(config.name(), p.masterId(), "read master",
                    () -> fields.masters.find(eq("_id", p.masterId()))
                            .projection(Projections.fields(fields.masterProjection, Projections.include(OPS))).first());
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

    /**
     * A master's first version, for a master deleted while its copies lived on and created again under the same id:
     * its copies still carry the versions of the earlier document, and the version guard would refuse every write of
     * the new one. Reads each target's newest copy, then the master: a copy newer than the master, or as new with
     * other values, was written from the earlier document (copies of this one are written after the master reached
     * their version, with its values at that version). Then raises the master's version above every copy's and
     * returns the master as it is then. Reads only (one per target and the master) on a master's first update; a
     * write only for a master created again.
     */
    Document aboveEarlierCopies(Object masterId, Document master) {
        Map<SyncTarget, Document> newest = new java.util.LinkedHashMap<>();
        for (Map.Entry<SyncTarget, MongoCollection<Document>> t : fields.targets.entrySet()) {
            Document copy = newestCopy(t.getKey(), t.getValue(), masterId);
            if (copy != null) {
                newest.put(t.getKey(), copy);
            }
        }
        if (newest.isEmpty()) {
            return master;
        }
        Document now = config.retryPolicy().execute(config.name(), masterId, "read master",
                () -> fields.masters.find(eq("_id", masterId)).projection(fields.masterProjection).first());
        if (now == null) {
            return master;
        }
        long current = versionOf(now);
        long highest = 0;
        boolean earlier = false;
        for (Map.Entry<SyncTarget, Document> e : newest.entrySet()) {
            Object v = e.getValue().get(e.getKey().versionField());
            long version = v instanceof Number n ? n.longValue() : 0L;
            highest = Math.max(highest, version);
            earlier |= version > current || (version == current && !sameValues(e.getKey(), e.getValue(), now));
        }
        if (!earlier) {
            return master;
        }
        long floor = highest + 1;
        Document raised = config.retryPolicy().execute(config.name(), masterId, "raise version above copies",
                () -> fields.masters.findOneAndUpdate(eq("_id", masterId), Updates.max(VERSION, floor),
                        new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER)
                                .projection(fields.masterProjection)));
        if (raised == null) {
            return master;
        }
        LOG.info("[{}] master {} was created again under its id: its version goes to {}, above its copies'",
                config.name(), masterId, versionOf(raised));
        return raised;
    }

    static boolean sameValues(SyncTarget target, Document copy, Document master) {
        for (Map.Entry<String, String> field : target.copies().entrySet()) {
            Value want = valueAt(master, field.getKey());
            Value have = valueAt(copy, field.getValue());
            if (want.present() != have.present() || !Objects.equals(want.value(), have.value())) {
                return false;
            }
        }
        return true;
    }

    /** The copy of {@code masterId} with the highest version in one target (for an array target: the element). */
    Document newestCopy(SyncTarget target, MongoCollection<Document> collection, Object masterId) {
        if (target.arrayField().isPresent()) {
            String array = target.arrayField().get();
            Document top = config.retryPolicy().execute(config.name(), masterId, "read copy versions",
                    () -> collection.aggregate(List.of(
                            Aggregates.match(elemMatch(array, eq(target.idField(), masterId))),
                            Aggregates.unwind("$" + array),
                            Aggregates.match(eq(array + "." + target.idField(), masterId)),
                            Aggregates.sort(Sorts.descending(array + "." + target.versionField())),
                            Aggregates.limit(1))).first());
            return top == null ? null : top.get(array, Document.class);
        }
        return config.retryPolicy().execute(config.name(), masterId, "read copy versions",
                () -> collection.find(eq(target.idField(), masterId)).sort(Sorts.descending(target.versionField()))
                        .first());
    }
}
