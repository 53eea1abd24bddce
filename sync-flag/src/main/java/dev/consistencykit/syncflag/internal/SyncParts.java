package dev.consistencykit.syncflag.internal;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ServerClock;
import dev.consistencykit.syncflag.SyncFlagConfig;
import dev.consistencykit.syncflag.SyncFlagListener;

/**
 * The parts of one sync flag instance, created and wired in one place; the entry type calls each directly.
 *
 * @param store    the only owner of the collections: the writes by name, the indexes
 * @param updates  an update checked, recorded on its master and propagated; a resync
 * @param recovery the sweeper's and readers' take-over of stale flags
 * @param audit    the operator's reads: verify, describe, interrupted, status, counters
 */
public record SyncParts(SyncStore store, SyncUpdates updates, SyncRecovery recovery, SyncAudit audit) {

    /** The parts over {@code database} (already checked for an acknowledged write concern). */
    public static SyncParts of(SyncFlagConfig config, MongoDatabase database, ServerClock clock,
                               SyncFlagListener listener) {
        SyncStore store = new SyncStore(config, database);
        SyncCounters counters = new SyncCounters();
        SyncPropagation propagation = new SyncPropagation(config.name(), store, counters, listener);
        SyncUpdates updates = new SyncUpdates(config, store, propagation, counters, listener);
        return new SyncParts(store, updates, new SyncRecovery(config, store, propagation, counters, clock),
                new SyncAudit(config, store, updates, counters, clock));
    }
}
