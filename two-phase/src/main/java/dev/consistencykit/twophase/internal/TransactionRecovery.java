package dev.consistencykit.twophase.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lte;
import static dev.consistencykit.twophase.internal.TransactionCodec.decode;
import static dev.consistencykit.twophase.internal.TransactionSchema.IN_FLIGHT;
import static dev.consistencykit.twophase.internal.TransactionSchema.LAST_MODIFIED;
import static dev.consistencykit.twophase.internal.TransactionSchema.OWNER;
import static dev.consistencykit.twophase.internal.TransactionSchema.SET_ASIDE;
import static dev.consistencykit.twophase.internal.TransactionSchema.STATE;
import static dev.consistencykit.twophase.internal.TransactionSchema.TOKEN;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

import org.bson.Document;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoWriteException;

import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.Checks;
import dev.consistencykit.core.spi.Listeners;
import dev.consistencykit.core.spi.MongoErrors;
import dev.consistencykit.core.spi.Passes;
import dev.consistencykit.core.spi.PatternRecovery;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.twophase.CommitStuckException;
import dev.consistencykit.twophase.StalePendingPolicy;
import dev.consistencykit.twophase.TransactionState;
import dev.consistencykit.twophase.TwoPhaseConfig;
import dev.consistencykit.twophase.TwoPhaseListener;
import dev.consistencykit.twophase.internal.TransactionDriving.Outcome;

/**
 * Recovery: taking over stale transactions and finishing or undoing them.
 */
public final class TransactionRecovery implements PatternRecovery {

    private static final Logger LOG = LoggerFactory.getLogger(TransactionRecovery.class);

    private final TwoPhaseConfig config;
    private final TransactionStore store;
    private final TransactionRecording recording;
    private final TransactionParticipants participants;
    private final TransactionDriving driving;
    private final TransactionCounters counters;
    private final ServerClock clock;
    private final TwoPhaseListener listener;
    private final Supplier<String> ownerIds;

    /** Recovery, through the store, with the recording, the participants and the driver it resumes. */
    TransactionRecovery(TwoPhaseConfig config, TransactionStore store, TransactionRecording recording,
                        TransactionParticipants participants, TransactionDriving driving, TransactionCounters counters,
                        ServerClock clock, TwoPhaseListener listener, Supplier<String> ownerIds) {
        this.config = config;
        this.store = store;
        this.recording = recording;
        this.participants = participants;
        this.driving = driving;
        this.counters = counters;
        this.clock = clock;
        this.listener = listener;
        this.ownerIds = ownerIds;
    }

    // ---------------------------------------------------------------- recovery

    /** Finishes or undoes every transaction without progress for {@code staleAfter}. */
    @Override
    public RecoveryReport recover(Duration staleAfter) {
        return recover(staleAfter, null);
    }

    /** {@link #recover(Duration)} for the transaction {@code id} alone. */
    @Override
    public RecoveryReport recoverOne(Object id, Duration staleAfter) {
        return recover(staleAfter, id);
    }

    /**
     * Finishes or undoes every transaction without progress for {@code staleAfter}; only the transaction {@code only}
     * when it is not {@code null} (an id checked by the caller).
     */
    public RecoveryReport recover(Duration staleAfter, Object only) {
        store.close();
        Objects.requireNonNull(staleAfter, "staleAfter");
        Checks.notNegative("staleAfter", staleAfter);
        long start = System.nanoTime();
        // Zero means every transaction not terminal: a time filter would miss one stamped by the server within the
        // error of our estimate of server time.
        // a transaction set aside is left to an operator: it would fail the same way on every pass
        Bson stale = staleAfter.isZero() ? and(in(STATE, IN_FLIGHT), exists(SET_ASIDE, false))
                : and(in(STATE, IN_FLIGHT), lte(LAST_MODIFIED, clock.cutoff(staleAfter)), exists(SET_ASIDE,
                false));
        if (only != null) {
            stale = and(eq("_id", only), stale);
        }
        int examined = 0;
        int forward = 0;
        int back = 0;
        int skipped = 0;
        int setAside = 0;
        Set<Object> seen = new HashSet<>();
        while (true) {
            List<Document> batch = store.stale(stale, config.recoveryBatch());
            batch.removeIf(d -> !seen.add(d.get("_id")));
            if (batch.isEmpty()) {
                break;
            }
            for (Document candidate : batch) {
                examined++;
                // null: left to the next pass, other writers kept winning over its documents
                Optional<TransactionState> end = Passes.orLeftToNextPass(config.name(), "recovery: transaction "
                        + Values.show(candidate.get("_id")), null, () -> recoverOrSetAside(candidate));
                if (end == null) {
                    skipped++;
                    continue;
                }
                if (end.isEmpty()) {
                    setAside++;
                    continue;
                }
                switch (end.get()) {
                    case DONE -> forward++;
                    case CANCELED -> back++;
                    default -> skipped++;
                }
            }
        }
        if (only == null) {
            participants.releaseAbandoned();
        }
        RecoveryReport report = new RecoveryReport(config.name(), examined, forward, back, skipped,
                Duration.ofNanos(System.nanoTime() - start), setAside);
        if (examined > 0) {
            LOG.info("[{}] recovery: {} stale transactions, {} rolled forward, {} rolled back, {} left to others",
                    config.name(), examined, forward, back, skipped);
        }
        return report;
    }

    /**
     * Recovers one transaction, or sets it aside when it cannot be finished for a reason retrying will not change: a
     * participant's prepare or rollback update the server refuses (a validator, a value of the wrong type written
     * there since), a record that cannot be read. (A refused commit update stays {@code applied} and is retried on
     * every pass: see {@link CommitStuckException}.) It is marked with the reason
     * ({@code setAside}), logged, still listed as interrupted, and left out of later passes until an operator removes
     * the mark; recovery goes on with the others. A server that is unavailable is not a reason: that propagates.
     *
     * @return where it ended, or empty if it was set aside
     */
    Optional<TransactionState> recoverOrSetAside(Document candidate) {
        String reason;
        try {
            return Optional.of(recoverOne(candidate));
        } catch (CommitStuckException stuck) {
            // recorded on the transaction; retried on every pass, so that a document repaired out of band is
            // committed by the next one, and later transactions on it are not blocked meanwhile
            return Optional.of(TransactionState.APPLIED);
        } catch (MongoWriteException | MongoBulkWriteException refused) {
            if (MongoErrors.isTransient(refused)) {
                throw refused;   // a conflict with another writer, not a reason: the next pass tries again
            }
            reason = "the server refused a participant's update: " + MongoErrors.serverSaid(refused);
        } catch (UnreadableRecord unreadable) {
            reason = unreadable.getMessage();
        }
        Object id = candidate.get("_id");
        String why = Values.show(reason);
        store.setAside(id, why);
        LOG.warn("[{}] transaction {} set aside by recovery, left to an operator: {}", config.name(), id, why);
        return Optional.empty();
    }

    TransactionState recoverOne(Document candidate) {
        TransactionState from = TransactionState.fromStored(candidate.getString(STATE));
        String owner = ownerIds.get();
        Optional<Document> claimed = takeOver(candidate, owner);
        if (claimed.isEmpty()) {
            return from;
        }
        Document doc = claimed.get();
        EncodedTransaction tx;
        try {
            tx = decode(doc);
        } catch (org.bson.BSONException | org.bson.json.JsonParseException | ClassCastException
                 | IllegalArgumentException e) {
            throw new UnreadableRecord("its record cannot be read: " + e.getMessage());
        }
        TransactionState state = TransactionState.fromStored(doc.getString(STATE));
        TransactionDriving.Pending pending = from == TransactionState.PENDING
                && config.stalePendingPolicy() == StalePendingPolicy.ROLL_BACK ? TransactionDriving.Pending.ROLL_BACK
                : TransactionDriving.Pending.CARRY_ON;
        Outcome outcome = driving.drive(tx, state, owner, doc.getLong(TOKEN), pending);
        if (outcome.lost()) {
            // fenced out by a recoverer that took it over later: that one reports what it did, this one did nothing
            LOG.debug("[{}] transaction {} was taken over while this recovery drove it; now {}", config.name(),
                    tx.id(), outcome.state().stored());
            return from;
        }
        if (outcome.state() == TransactionState.DONE) {
            counters.recoveredForward.increment();
        } else if (outcome.state() == TransactionState.CANCELED) {
            counters.recoveredBack.increment();
        }
        LOG.info("[{}] recovered transaction {}: {} -> {}", config.name(), tx.id(), from.stored(),
                outcome.state().stored());
        TransactionState end = outcome.state();
        Listeners.call(config.name(), () -> listener.onRecovered(tx.operationId(), from, end));
        return end;
    }

    /** A record recovery cannot decode: the transactions collection holds data this engine did not write. */
    static final class UnreadableRecord extends RuntimeException {
        private static final long serialVersionUID = 1L;

        UnreadableRecord(String message) {
            super(message, null, false, false);
        }
    }

    /** Takes {@code seen} over by a compare-and-set on its state and fencing token; empty if another won. */
    Optional<Document> takeOver(Document seen, String owner) {
        boolean initial = TransactionState.INITIAL.stored().equals(seen.getString(STATE));
        Bson filter = and(eq("_id", seen.get("_id")), eq(STATE, seen.getString(STATE)),
                eq(TOKEN, seen.get(TOKEN)));
        Document claimed = store.takeOver(seen.get("_id"), filter, TransactionSchema.claimUpdate(owner, initial,
                TransactionSchema.leaseExpiry(clock, config.lease())));
        if (claimed == null) {
            // a retried claim whose first attempt applied finds the token moved on: ours if the owner is ours
            Document now = recording.readPrimary(seen.get("_id"));
            if (now != null && owner.equals(now.getString(OWNER))) {
                return Optional.of(now);
            }
            return Optional.empty();
        }
        return Optional.of(claimed);
    }
}
