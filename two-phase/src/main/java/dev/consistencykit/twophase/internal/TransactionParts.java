package dev.consistencykit.twophase.internal;

import java.util.function.Supplier;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ServerClock;
import dev.consistencykit.twophase.TwoPhaseConfig;
import dev.consistencykit.twophase.TwoPhaseListener;

/**
 * The parts of one two-phase instance, created and wired in one place; the entry type calls each directly.
 *
 * <p><b>Protocol.</b> One atomic write records the transaction with all its participants (state {@code pending}
 * when the caller drives it, {@code initial} when a worker will). Prepare runs the
 * {@link dev.consistencykit.core.spi.OnceEffects} lifecycle: it reserves every participant for this attempt (owner
 * and fencing token; one unordered bulk write per collection, capped per document), reads the transaction back to check that it is still pending under this attempt's token,
 * and only then applies each participant's prepare update under that attempt's own reservation, guarded by its
 * precondition (one bulk per collection). The decision is one compare-and-set of the transaction's state
 * ({@code pending → applied} or {@code pending → canceling}) carrying the owner's fencing token, so commit and
 * rollback can never both win. Settling applies the commit (or rollback) update to each participant the prepare
 * was applied to and removes the mark in the same write; a rollback first releases every reservation, so no prepare
 * can land after it. Nothing is left on a participant once it has settled: its overhead is the transactions in
 * flight on it.
 *
 * <p><b>Ownership.</b> Whoever drives a transaction holds its current fencing token; every state change carries
 * it. Recovery takes a transaction over by incrementing the token in a compare-and-set on the token it read, so
 * two recoverers never both take one, and the former owner's next state change fails: it then reports what the
 * transaction became. A paused owner that wakes however late cannot apply: its reservation was consumed, released or
 * taken over, and a reservation it sends late is followed by the ownership check, which fails.
 *
 * <p>An uncontended transfer costs seven round trips: record, reserve (one bulk), check, prepare (one bulk), decide,
 * settle (one bulk), finish.
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
