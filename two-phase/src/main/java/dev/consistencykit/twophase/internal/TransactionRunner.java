package dev.consistencykit.twophase.internal;

import static dev.consistencykit.twophase.internal.TransactionCodec.decode;
import static dev.consistencykit.twophase.internal.TransactionSchema.LEASE;
import static dev.consistencykit.twophase.internal.TransactionSchema.OWNER;
import static dev.consistencykit.twophase.internal.TransactionSchema.STATE;
import static dev.consistencykit.twophase.internal.TransactionSchema.TOKEN;

import java.util.Date;
import java.util.Optional;
import java.util.function.Supplier;

import org.bson.Document;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.twophase.TransactionState;
import dev.consistencykit.twophase.TwoPhaseConfig;
import dev.consistencykit.twophase.internal.TransactionDriving.Outcome;
import dev.consistencykit.twophase.internal.TransactionRecording.Recorded;

/**
 * A transaction's way in: recorded for a worker ({@link #submit}), recorded and driven in the caller's thread
 * ({@link #apply}), or claimed by a worker and driven ({@link #processNext}).
 */
public final class TransactionRunner {

    private final TwoPhaseConfig config;
    private final TransactionStore store;
    private final TransactionRecording recording;
    private final TransactionDriving driving;
    private final TransactionRecovery recovery;
    private final ServerClock clock;
    private final Supplier<String> ownerIds;

    TransactionRunner(TwoPhaseConfig config, TransactionStore store, TransactionRecording recording,
                      TransactionDriving driving, TransactionRecovery recovery, ServerClock clock,
                      Supplier<String> ownerIds) {
        this.config = config;
        this.store = store;
        this.recording = recording;
        this.driving = driving;
        this.recovery = recovery;
        this.clock = clock;
        this.ownerIds = ownerIds;
    }

    /** Records {@code tx} in {@code initial} for a worker to run. */
    public OperationId submit(EncodedTransaction tx) {
        recording.record(tx, TransactionState.INITIAL, null);
        return tx.operationId();
    }

    /** Records {@code tx} and drives it to a terminal state in this thread. */
    public OperationResult apply(EncodedTransaction tx) {
        String owner = ownerIds.get();
        Recorded recorded = recording.record(tx, TransactionState.PENDING, owner);
        Outcome outcome;
        if (recorded.inserted()) {
            outcome = driving.drive(tx, TransactionState.PENDING, owner, 1L, TransactionDriving.Pending.CARRY_ON);
        } else {
            outcome = resume(tx, recorded.existing(), owner);
        }
        return driving.toResult(tx, outcome, true);
    }

    /** Drives a transaction that already existed when {@code apply()} recorded it. */
    private Outcome resume(EncodedTransaction tx, Document existing, String owner) {
        TransactionState state = TransactionState.fromStored(existing.getString(STATE));
        if (state.isTerminal()) {
            return Outcome.of(state, existing);
        }
        if (owner.equals(existing.getString(OWNER))) {
            // our own record: the write applied but its acknowledgement was lost, and the retry found it
            return driving.drive(tx, state, owner, existing.getLong(TOKEN), TransactionDriving.Pending.CARRY_ON);
        }
        Date lease = existing.getDate(LEASE);
        boolean claimable = state == TransactionState.INITIAL || lease == null
                || !lease.toInstant().isAfter(clock.now());
        if (!claimable) {
            return Outcome.inFlight(state);
        }
        Optional<Document> claimed = recovery.takeOver(existing, owner);
        if (claimed.isEmpty()) {
            Document now = recording.readPrimary(tx.id());
            return now == null ? Outcome.inFlight(state) : Outcome.of(TransactionState.fromStored(
                    now.getString(STATE)), now);
        }
        Document doc = claimed.get();
        return driving.drive(tx, TransactionState.fromStored(doc.getString(STATE)), owner, doc.getLong(TOKEN),
                TransactionDriving.Pending.CARRY_ON);
    }

    /**
     * Claims the oldest {@code initial} transaction and drives it. Cancellations are returned as aborted results,
     * not thrown.
     */
    public Optional<OperationResult> processNext() {
        String owner = ownerIds.get();
        Document claimed = store.claimNext(owner, TransactionSchema.claimUpdate(owner, true,
                TransactionSchema.leaseExpiry(clock, config.lease())));
        if (claimed == null) {
            return Optional.empty();
        }
        EncodedTransaction tx = decode(claimed);
        Outcome outcome = driving.drive(tx, TransactionState.PENDING, owner, claimed.getLong(TOKEN),
                TransactionDriving.Pending.CARRY_ON);
        return Optional.of(driving.toResult(tx, outcome, false));
    }
}
