package dev.consistencykit.twophase.internal;

import static dev.consistencykit.twophase.internal.TransactionSchema.CREATED;
import static dev.consistencykit.twophase.internal.TransactionSchema.HISTORY;
import static dev.consistencykit.twophase.internal.TransactionSchema.LABEL;
import static dev.consistencykit.twophase.internal.TransactionSchema.LAST_ERROR;
import static dev.consistencykit.twophase.internal.TransactionSchema.LEASE;
import static dev.consistencykit.twophase.internal.TransactionSchema.OWNER;
import static dev.consistencykit.twophase.internal.TransactionSchema.PARTICIPANTS;
import static dev.consistencykit.twophase.internal.TransactionSchema.SET_ASIDE;
import static dev.consistencykit.twophase.internal.TransactionSchema.SPEC;
import static dev.consistencykit.twophase.internal.TransactionSchema.TOKEN;

import java.time.Duration;
import java.util.Date;
import java.util.List;
import java.util.Objects;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.twophase.TransactionState;
import dev.consistencykit.twophase.TwoPhaseConfig;

/** The pruner: finished transactions past retention deleted, or compacted while their writers hold them. */
public final class TransactionPruner {

    private static final Logger LOG = LoggerFactory.getLogger(TransactionPruner.class);

    private final TwoPhaseConfig config;
    private final TransactionStore store;
    private final ServerReplay replay;
    private final TransactionCounters counters;
    private final ServerClock clock;

    TransactionPruner(TwoPhaseConfig config, TransactionStore store, ServerReplay replay,
                      TransactionCounters counters, ServerClock clock) {
        this.config = config;
        this.store = store;
        this.replay = replay;
        this.counters = counters;
        this.clock = clock;
    }

    /**
     * What compaction removes from a held terminal transaction: all but its id, state, reason, last change and hold,
     * which is what a late retry of its record write reads (its state and reason are its answer).
     */
    static final List<String> COMPACTED_AWAY = List.of(LABEL, PARTICIPANTS, SPEC, HISTORY, OWNER, LEASE, TOKEN,
            CREATED, LAST_ERROR, SET_ASIDE);

    /**
     * Deletes terminal transactions older than {@code retention} that their recorders released, and compacts those
     * still held ({@link RecordReleases#compact}): two writes.
     */
    public int prune(Duration retention) {
        Objects.requireNonNull(retention, "retention");
        store.close();
        Date cutoff = clock.cutoff(retention);
        List<String> terminal = List.of(TransactionState.DONE.stored(), TransactionState.CANCELED.stored());
        // a record its recorder has not released may still be written again by that recorder's retry: kept
        int count = (int) store.deleteFinished(terminal, cutoff);
        counters.pruned.add(count);
        if (count > 0) {
            LOG.info("[{}] pruned {} terminal transactions older than {}", config.name(), count, retention);
        }
        // held records past their retention keep only what a late retry of their record write reads
        long compacted = store.compactFinished(terminal, cutoff, COMPACTED_AWAY);
        if (compacted > 0) {
            LOG.info("[{}] compacted {} terminal transactions past their retention that their writers still hold",
                    config.name(), compacted);
        }
        // copies a consistent read left when it died mid-replay: garbage, never evidence
        replay.sweep(clock.cutoff(ServerReplay.ABANDONED_AFTER));
        return count;
    }
}
