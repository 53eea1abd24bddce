package dev.consistencykit.syncflag.internal;

import static dev.consistencykit.syncflag.internal.SyncSchema.CANONICAL;
import static dev.consistencykit.syncflag.internal.SyncSchema.FLAG;
import static dev.consistencykit.syncflag.internal.SyncSchema.OPS;
import static dev.consistencykit.syncflag.internal.SyncSchema.RESYNC_FINGERPRINT;
import static dev.consistencykit.syncflag.internal.SyncSchema.SYNCED;
import static dev.consistencykit.syncflag.internal.SyncSchema.VERSION;
import static dev.consistencykit.syncflag.internal.SyncSchema.valueAt;
import static dev.consistencykit.syncflag.internal.SyncSchema.versionOf;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.google.common.hash.Hashing;
import com.mongodb.MongoServerException;

import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.OutcomeUnknownException;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.Listeners;
import dev.consistencykit.core.spi.UpdateGrammar;
import dev.consistencykit.syncflag.MasterMissingException;
import dev.consistencykit.syncflag.MasterUpdate;
import dev.consistencykit.syncflag.SyncFlagConfig;
import dev.consistencykit.syncflag.SyncFlagListener;
import dev.consistencykit.syncflag.SyncFlagListener.Source;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.syncflag.UpdateRejectedException;
import dev.consistencykit.syncflag.internal.SyncSchema.Value;

/**
 * The protocol of an update: checked before anything is sent, then the master's change, its version and its flag in
 * one write, then propagation.
 */
public final class SyncUpdates {

    private static final Logger LOG = LoggerFactory.getLogger(SyncUpdates.class);
    private static final int RECORD_ATTEMPTS = 3;

    /** An update checked and ready to send. */
    public record Prepared(OperationId id, Object masterId, BsonDocument update, boolean touchesCopies,
                           String fingerprint) {
    }

    /** The master as the update left it (or found it, when the update had been recorded before). */
    record Recorded(Document master, boolean fresh) {
    }

    private final SyncFlagConfig config;
    private final SyncStore store;
    private final SyncPropagation propagation;
    private final SyncCounters counters;
    private final SyncFlagListener listener;

    SyncUpdates(SyncFlagConfig config, SyncStore store, SyncPropagation propagation, SyncCounters counters,
                SyncFlagListener listener) {
        this.config = config;
        this.store = store;
        this.propagation = propagation;
        this.counters = counters;
        this.listener = listener;
    }

    /**
     * Checks an update before anything is sent: a valid master id, operators only, nothing reserved touched, no copied
     * field removed.
     */
    public Prepared prepare(MasterUpdate change) {
        Objects.requireNonNull(change, "change");
        Object masterId = Ids.documentId(config.name(), "masterId", change.masterId(), store.codecs());
        BsonDocument update = UpdateGrammar.updateSpec(config.name(), "update", change.update(), store.codecs());
        boolean touches = false;
        for (UpdatePaths.Touched t : UpdatePaths.of(update)) {
            if (t.path().isEmpty() || t.path().startsWith("$") || t.path().contains("..")) {
                throw new InvalidInputException(config.name(), "update", "update " + t.operator()
                        + " names an invalid field '" + t.path() + "'");
            }
            if (SyncFlagConfig.RESERVED_FIELDS.contains(UpdatePaths.top(t.path()))) {
                throw new InvalidInputException(config.name(), "update", "update " + t.operator() + " touches '"
                        + t.path() + "', a field the sync flag keeps (reserved: " + SyncFlagConfig.RESERVED_FIELDS
                        + ")");
            }
            for (String field : config.masterFields()) {
                if (t.removes() && UpdatePaths.covers(t.path(), field)) {
                    throw new InvalidInputException(config.name(), "update", "update " + t.operator()
                            + " removes '" + t.path() + "', which holds the copied field '" + field
                            + "'; set it to a value instead");
                }
                touches |= UpdatePaths.overlaps(t.path(), field);
            }
        }
        // the id by MongoDB's equality (1 and 1L are one master; "1" and 1 are two), the update as encoded
        BsonValue key = Ids.idKey(masterId, store.codecs());
        String canonical = new BsonDocument("m", key).toJson(CANONICAL) + update.toJson(CANONICAL);
        String fingerprint = Hashing.sha256().hashString(canonical, StandardCharsets.UTF_8).toString()
                .substring(0, 32);
        return new Prepared(change.id(), masterId, update, touches, fingerprint);
    }

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
        Object id = Ids.documentId(config.name(), "masterId", masterId, store.codecs());
        Prepared p = new Prepared(OperationId.random(), id, new BsonDocument(), true, RESYNC_FINGERPRINT);
        Recorded r = record(p);
        return propagation.propagate(r.master(), Source.RESYNC).written();
    }

    Recorded record(Prepared p) {
        Object opId = p.id().value();
        for (int attempt = 1; attempt <= RECORD_ATTEMPTS; attempt++) {
            Document after;
            try {
                after = store.recordUpdate(p.masterId(), opId, p.fingerprint(), p.update().isEmpty() ? null
                        : p.update(), p.touchesCopies());
            } catch (MongoServerException e) {
                // not transient (the retry policy rethrows only those): the server refused the update, so it
                // did not apply
                throw new UpdateRejectedException(config.name(), p.masterId(), e);
            }
            if (after != null) {
                counters.updates.increment();
                if (p.touchesCopies() && versionOf(after) == 1) {
                    after = aboveEarlierCopies(p.masterId(), after);
                }
                long version = versionOf(after);
                LOG.debug("[{}] updated master {} (op {}, version {}, flagged {})", config.name(), p.masterId(), opId,
                        version, p.touchesCopies());
                Listeners.call(config.name(), () -> listener.onMasterUpdated(p.id(), p.masterId(), version,
                        p.touchesCopies()));
                return new Recorded(after, true);
            }
            Document existing = store.masterWithOps(p.masterId());
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
            Optional<String> version = p.touchesCopies() ? SyncSchema.uncountableVersion(existing) : Optional.empty();
            if (version.isPresent()) {
                throw new UpdateRejectedException(config.name(), p.masterId(), "master " + p.masterId() + " holds "
                        + version.get() + " as its version (" + VERSION + "), which no copy's version can be compared"
                        + " with; set it to a whole number at least as high as its copies' or remove it (the next"
                        + " update then raises it above them)");
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
     * returns the master as it is then. Reads only (one per target, and the master when a copy carries a version) on a
     * master's first update; a write only for a master created again.
     */
    Document aboveEarlierCopies(Object masterId, Document master) {
        Map<SyncTarget, Document> newest = new java.util.LinkedHashMap<>();
        for (SyncTarget target : store.targets()) {
            Document copy = store.newestCopy(target, masterId);
            if (copy != null) {
                newest.put(target, copy);
            }
        }
        if (newest.isEmpty()) {
            return master;
        }
        Document now = store.master(masterId);
        if (now == null) {
            return master;
        }
        long current = versionOf(now);
        long highest = 0;
        boolean earlier = false;
        for (Map.Entry<SyncTarget, Document> e : newest.entrySet()) {
            Object v = e.getValue().get(e.getKey().versionField());
            // a version is a whole number below the top of the range; anything else counts as none (the writes'
            // version guard takes such a copy for older than any)
            long version = (v instanceof Integer || v instanceof Long) && ((Number) v).longValue() < Long.MAX_VALUE
                    ? ((Number) v).longValue() : 0L;
            highest = Math.max(highest, version);
            earlier |= version > current || (version == current && !sameValues(e.getKey(), e.getValue(), now));
        }
        if (!earlier) {
            return master;
        }
        long floor = highest + 1;
        Document raised = store.raiseVersion(masterId, floor);
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
}
