package dev.consistencykit.twophase.internal;

import java.util.function.Supplier;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ServerClock;
import dev.consistencykit.twophase.TwoPhaseConfig;
import dev.consistencykit.twophase.TwoPhaseListener;

/**
 * The parts of one two-phase instance, created and wired in one place; the entry type calls each directly.
 *
 * @param store    the only owner of the collections: the record's writes by name, the indexes, the records held
 * @param codec    a transaction checked and encoded in its stored form
 * @param runner   a transaction recorded, driven in the caller's thread, or claimed by a worker and driven
 * @param recovery stale transactions taken over and finished or undone
 * @param reads    the consistent and the settled reads of participants
 * @param pruner   finished transactions past retention removed
 * @param audit    the operator's reads: describe, interrupted, status, audit, counters
 */
public record TransactionParts(TransactionStore store, TransactionCodec codec, TransactionRunner runner,
                               TransactionRecovery recovery, TransactionReads reads, TransactionPruner pruner,
                               TransactionAudit audit) {

    /** The parts over {@code database} (already checked for an acknowledged write concern). */
    public static TransactionParts of(TwoPhaseConfig config, MongoDatabase database, ServerClock clock,
                                      TwoPhaseListener listener, Supplier<String> ownerIds) {
        TransactionStore store = new TransactionStore(config, database);
        TransactionCounters counters = new TransactionCounters();
        TransactionRecording recording = new TransactionRecording(config, store, clock, ownerIds);
        TransactionParticipants participants = new TransactionParticipants(config, store, recording);
        TransactionSettlement settlement = new TransactionSettlement(config, store, participants, counters, listener);
        TransactionDriving driving = new TransactionDriving(config, store, recording, participants, settlement,
                counters, clock, listener);
        TransactionRecovery recovery = new TransactionRecovery(config, store, recording, participants, driving,
                counters, clock, listener, ownerIds);
        ServerReplay replay = new ServerReplay(store);
        TransactionReads reads = new TransactionReads(config, store, new ConsistentReader(store, replay));
        return new TransactionParts(store, new TransactionCodec(config, store.codecs()),
                new TransactionRunner(config, store, recording, driving, recovery, clock, ownerIds), recovery, reads,
                new TransactionPruner(config, store, replay, counters, clock),
                new TransactionAudit(config, store, reads, counters, clock));
    }
}
