package dev.consistencykit.syncflag.internal;

import static dev.consistencykit.syncflag.internal.SyncSchema.FLAG;
import static dev.consistencykit.syncflag.internal.SyncSchema.versionOf;

import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.consistencykit.core.spi.Listeners;
import dev.consistencykit.syncflag.SyncFlagListener;
import dev.consistencykit.syncflag.SyncFlagListener.Source;
import dev.consistencykit.syncflag.SyncTarget;

/**
 * The propagation of a master to its copies: one {@code updateMany} per target that moves every older copy to the
 * master's values, then the flag cleared if it is still the one the master carried.
 */
final class SyncPropagation {

    private static final Logger LOG = LoggerFactory.getLogger(SyncPropagation.class);

    private final String name;
    private final SyncStore store;
    private final SyncCounters counters;
    private final SyncFlagListener listener;

    SyncPropagation(String name, SyncStore store, SyncCounters counters, SyncFlagListener listener) {
        this.name = name;
        this.store = store;
        this.counters = counters;
        this.listener = listener;
    }

    record Propagated(long written, boolean cleared) {
    }

    /**
     * Writes {@code master}'s values (as read together with its version) to every copy with a lower version, then
     * clears the flag if it is still the one {@code master} carried.
     */
    Propagated propagate(Document master, Source source) {
        Object masterId = master.get("_id");
        long version = versionOf(master);
        Document flag = master.get(FLAG, Document.class);
        long written = 0;
        for (SyncTarget target : store.targets()) {
            written += store.writeCopies(target, masterId, master, version);
        }
        // only our own flag: a newer update's flag means its propagation is still to come
        boolean cleared = flag != null && store.clearFlag(masterId, flag.get("op"));
        counters.propagations.increment();
        (source == Source.UPDATE ? counters.copiesWritten : counters.copiesRepaired).add(written);
        if (!cleared) {
            counters.flagsLeft.increment();
        }
        long total = written;
        LOG.debug("[{}] propagated master {} version {}: {} copies written, flag {} ({})", name, masterId, version,
                written, cleared ? "cleared" : "left", source);
        Listeners.call(name, () -> listener.onPropagated(masterId, version, total, cleared, source));
        return new Propagated(written, cleared);
    }
}
