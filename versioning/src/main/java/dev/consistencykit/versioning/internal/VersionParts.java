package dev.consistencykit.versioning.internal;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ServerClock;
import dev.consistencykit.versioning.VersionedStoreConfig;
import dev.consistencykit.versioning.VersionedStoreListener;

/**
 * The parts of one versioned store, created and wired in one place; the entry type calls each directly.
 *
 * <p>The versioned-store protocol (see the package documentation of {@code dev.consistencykit.versioning}): stage on
 * the root, write the item versions, commit by compare-and-set on the root; read the root, then the item versions it
 * commits; settle, clean up, prune and recover from any number of processes.
 *
 * @param store       the only owner of the collections: the writes by name, the indexes
 * @param writes      a change set checked, staged, written and committed; a root created
 * @param reads       the trees, items, histories and versions readers get
 * @param settlement  committed versions moved from their root into the version records
 * @param maintenance recovery of stale change sets, clean-up and pruning
 * @param audit       the operator's reads: describe, interrupted, status, counters
 */
public record VersionParts(VersionStore store, VersionWrites writes, VersionReads reads,
                           VersionSettlement settlement, VersionMaintenance maintenance, VersionAudit audit) {

    /** The parts over {@code database} (already checked for an acknowledged write concern). */
    public static VersionParts of(VersionedStoreConfig config, MongoDatabase database, ServerClock clock,
                                  VersionedStoreListener listener) {
        VersionStore store = new VersionStore(config, database);
        VersionCounters counters = new VersionCounters();
        VersionSettlement settlement = new VersionSettlement(config.name(), store, counters, listener);
        VersionWrites writes = new VersionWrites(config, store, settlement, counters, listener);
        VersionReads reads = new VersionReads(config.name(), config.inlineTreeBytes() > 0, store, counters);
        return new VersionParts(store, writes, reads, settlement,
                new VersionMaintenance(config, store, writes, settlement, counters, clock, listener),
                new VersionAudit(config.name(), store, reads, counters, clock));
    }
}
