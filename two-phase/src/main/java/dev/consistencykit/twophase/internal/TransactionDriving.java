package dev.consistencykit.twophase.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static dev.consistencykit.twophase.CancellationReason.STALE;
import static dev.consistencykit.twophase.internal.TransactionParticipants.nonce;
import static dev.consistencykit.twophase.internal.TransactionSchema.CALLER_REASONS;
import static dev.consistencykit.twophase.internal.TransactionSchema.HISTORY;
import static dev.consistencykit.twophase.internal.TransactionSchema.LEASE;
import static dev.consistencykit.twophase.internal.TransactionSchema.OWNER;
import static dev.consistencykit.twophase.internal.TransactionSchema.REASON;
import static dev.consistencykit.twophase.internal.TransactionSchema.STATE;
import static dev.consistencykit.twophase.internal.TransactionSchema.TOKEN;
import static dev.consistencykit.twophase.internal.TransactionSchema.reason;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import org.bson.Document;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.client.model.Updates;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.ConditionalUpdates;
import dev.consistencykit.core.spi.GuardedResult;
import dev.consistencykit.core.spi.Listeners;
import dev.consistencykit.core.spi.Transition;
import dev.consistencykit.twophase.ArithmeticOverflowException;
import dev.consistencykit.twophase.CancellationReason;
import dev.consistencykit.twophase.InsufficientFundsException;
import dev.consistencykit.twophase.ParticipantMissingException;
import dev.consistencykit.twophase.ParticipantRejectedException;
import dev.consistencykit.twophase.PreconditionFailedException;
import dev.consistencykit.twophase.TooManyPendingTransactionsException;
import dev.consistencykit.twophase.TransactionCanceledException;
import dev.consistencykit.twophase.TransactionState;
import dev.consistencykit.twophase.TwoPhaseConfig;
import dev.consistencykit.twophase.TwoPhaseListener;
import dev.consistencykit.twophase.internal.TransactionParticipants.Prepared;

/**
 * Driving a transaction through its states, and its result.
 */
final class TransactionDriving {

    private static final Logger LOG = LoggerFactory.getLogger(TransactionDriving.class);

    private final TwoPhaseConfig config;
    private final TransactionStore store;
    private final TransactionRecording recording;
    private final TransactionParticipants participants;
    private final TransactionSettlement settlement;
    private final TransactionCounters counters;
    private final ServerClock clock;
    private final TwoPhaseListener listener;

    /** The driver of the state machine, through the store, over the participants and the settlement. */
    TransactionDriving(TwoPhaseConfig config, TransactionStore store, TransactionRecording recording,
                       TransactionParticipants participants, TransactionSettlement settlement,
                       TransactionCounters counters, ServerClock clock, TwoPhaseListener listener) {
        this.config = config;
        this.store = store;
        this.recording = recording;
        this.participants = participants;
        this.settlement = settlement;
        this.counters = counters;
        this.clock = clock;
        this.listener = listener;
    }

    // ---------------------------------------------------------------- driving

    /**
     * Where a drive ended, made only by the factories below, each named for how: {@code lost} when this attempt no
     * longer drove it at the end (taken over, or its evidence gone), {@code stillOurs} when the record still names
     * this attempt although a step found its evidence gone.
     */
    record Outcome(TransactionState state, boolean lost, Document reason, boolean stillOurs) {

        /** Ended by this drive, with the reason the record holds (canceled), if any. */
        static Outcome ended(TransactionState state, Document reason) {
            return new Outcome(state, false, reason, false);
        }

        /** As the record {@code tx} says it is, by this attempt's hand. */
        static Outcome of(TransactionState state, Document tx) {
            return ended(state, tx == null ? null : tx.get(REASON, Document.class));
        }

        /** Left unfinished: another owner has it, or nobody can tell. */
        static Outcome inFlight(TransactionState state) {
            return new Outcome(state, true, null, false);
        }

        /** Ended, by another's hand. */
        static Outcome endedByAnother(TransactionState state, Document reason) {
            return new Outcome(state, true, reason, false);
        }

        /** A step lost its evidence while the record still names this attempt: drive on from {@code state}. */
        static Outcome stillOurs(TransactionState state) {
            return new Outcome(state, true, null, true);
        }
    }

    /** What a drive does with a transaction it finds {@code pending}. */
    enum Pending {
        /** Prepare, decide and settle it: its owner's drive, or recovery rolling it forward. */
        CARRY_ON,
        /** Roll it back: recovery of a stale pending transaction under {@code StalePendingPolicy.ROLL_BACK}. */
        ROLL_BACK
    }

    Outcome drive(EncodedTransaction tx, TransactionState start, String owner, long token, Pending pending) {
        for (int round = 1; ; round++) {
            Outcome outcome = driveOnce(tx, start, owner, token, pending);
            if (!outcome.stillOurs() || round >= 5) {
                return outcome;
            }
            // a step found this attempt's evidence gone while the record still names it: an owner taken over earlier,
            // not yet aware of it, moved what it touched; the record says this attempt owns it, so drive on from there
            LOG.debug("[{}] transaction {}: still ours after a lost step, driving on from {}", config.name(), tx.id(),
                    outcome.state());
            start = outcome.state();
        }
    }

    Outcome driveOnce(EncodedTransaction tx, TransactionState start, String owner, long token,
                              Pending pending) {
        TransactionState state = start;
        try {
            while (true) {
                switch (state) {
                    case INITIAL, PENDING -> {
                        if (pending == Pending.ROLL_BACK) {
                            state = decide(tx, owner, token, TransactionState.CANCELING, reason(STALE, null,
                                    "recovered after going stale in pending"));
                            break;
                        }
                        Prepared prepared = participants.prepareAll(tx, owner, token, nonce(owner, token));
                        if (prepared.lost()) {
                            participants.releaseOwn(tx, nonce(owner, token));
                            Document now = recording.readPrimary(tx.id());
                            throw new LostOwnership(now);
                        }
                        state = prepared.failure() == null ? decide(tx, owner, token, TransactionState.APPLIED, null)
                                : decide(tx, owner, token, TransactionState.CANCELING, prepared.failure());
                    }
                    case APPLIED -> {
                        settlement.commitAll(tx, token);
                        state = finish(tx, owner, token, TransactionState.APPLIED, TransactionState.DONE);
                    }
                    case CANCELING -> {
                        settlement.rollbackAll(tx);
                        state = finish(tx, owner, token, TransactionState.CANCELING, TransactionState.CANCELED);
                    }
                    case DONE -> {
                        counters.committed.increment();
                        Listeners.call(config.name(), () -> listener.onCommitted(tx.operationId()));
                        return Outcome.ended(TransactionState.DONE, null);
                    }
                    case CANCELED -> {
                        Document done = recording.readPrimary(tx.id());
                        Document reason = done == null ? null : done.get(REASON, Document.class);
                        counters.canceled.increment();
                        String code = reason == null ? null : reason.getString("code");
                        Listeners.call(config.name(), () -> listener.onCanceled(tx.operationId(), code));
                        return Outcome.ended(TransactionState.CANCELED, reason);
                    }
                    default -> throw new IllegalStateException("unknown state " + state);
                }
            }
        } catch (LostOwnership lost) {
            counters.leaseLost.increment();
            Listeners.call(config.name(), () -> listener.onLeaseLost(tx.operationId()));
            Document now = lost.current;
            if (now == null) {
                return Outcome.inFlight(state);
            }
            TransactionState current = TransactionState.fromStored(now.getString(STATE));
            if (!current.isTerminal() && owner.equals(now.getString(OWNER))
                    && Objects.equals(now.get(TOKEN), token)) {
                return Outcome.stillOurs(current);
            }
            LOG.debug("[{}] transaction {} taken over by {}, now {}", config.name(), tx.id(), now.get(OWNER),
                    current);
            // terminal, but by another's hand: reported as where it ended, and as not this attempt's doing
            return current.isTerminal() ? Outcome.endedByAnother(current, now.get(REASON, Document.class))
                    : Outcome.inFlight(current);
        }
    }

    /** The decision: one fenced compare-and-set from {@code pending}. */
    TransactionState decide(EncodedTransaction tx, String owner, long token, TransactionState to, Document reason) {
        Bson extra = reason == null ? null : Updates.set(REASON, reason);
        return move(tx, owner, token, TransactionState.PENDING, to, extra);
    }

    TransactionState finish(EncodedTransaction tx, String owner, long token, TransactionState from,
                                    TransactionState to) {
        return move(tx, owner, token, from, to, null);
    }

    /**
     * A state change carrying this drive's owner and fencing token: the token orders owners of one transaction, the
     * owner (unique per drive) tells two transactions apart that were recorded under the same id, one after the
     * other was pruned, whose tokens both start at 1.
     */
    TransactionState move(EncodedTransaction tx, String owner, long token, TransactionState from, TransactionState to,
                                  Bson extra) {
        List<Bson> updates = new ArrayList<>();
        updates.add(Updates.push(HISTORY, to.stored()));
        updates.add(Updates.set(LEASE, TransactionSchema.leaseExpiry(clock, config.lease())));
        if (extra != null) {
            updates.add(extra);
        }
        Transition transition = Transition.of(STATE, from.stored(), to.stored())
                .guardedBy(and(eq(TOKEN, token), eq(OWNER, owner)))
                .alsoUpdating(Updates.combine(updates)).returningNothing();
        GuardedResult result = store.move(tx.id(), from.stored() + " -> " + to.stored(), transition);
        Document doc = result.document().orElse(null);
        switch (result.outcome()) {
            case APPLIED:
                LOG.debug("[{}] transaction {} {} -> {}", config.name(), tx.id(), from.stored(), to.stored());
                return to;
            case MISSING:
                throw new ConsistencyException(config.name(), tx.id(), "the transaction document disappeared while"
                        + " in " + from.stored());
            default:
                if (doc != null && ConditionalUpdates.tokenOf(doc, TransactionStore.TOKEN_FIELDS) == token
                        && owner.equals(doc.getString(OWNER))) {
                    // our own earlier attempt applied (its reply was lost), or we are behind our own state
                    return TransactionState.fromStored(doc.getString(STATE));
                }
                throw new LostOwnership(doc);
        }
    }

    // ---------------------------------------------------------------- results

    OperationResult toResult(EncodedTransaction tx, Outcome outcome, boolean throwOnPrecondition) {
        OperationId id = tx.operationId();
        return switch (outcome.state()) {
            case DONE -> OperationResult.committed(id, TransactionState.DONE.stored());
            case CANCELED -> {
                Document reason = outcome.reason();
                Optional<CancellationReason> code = reason == null ? Optional.empty()
                        : CancellationReason.fromStored(reason.getString("code"));
                String message = reason == null ? "canceled" : reason.getString("message");
                if (throwOnPrecondition && code.isPresent() && CALLER_REASONS.contains(code.get())) {
                    throw canceledException(id, code.get(), reason.getString("participant"), message);
                }
                yield OperationResult.aborted(id, TransactionState.CANCELED.stored(), message);
            }
            default -> OperationResult.inFlight(id, outcome.state().stored());
        };
    }

    TransactionCanceledException canceledException(OperationId id, CancellationReason reason, String participant,
                                                   String message) {
        String code = reason.stored();
        return switch (reason) {
            case INSUFFICIENT_FUNDS -> new InsufficientFundsException(config.name(), id, code, participant, message);
            case PARTICIPANT_MISSING -> new ParticipantMissingException(config.name(), id, code, participant, message);
            case TOO_MANY_PENDING -> new TooManyPendingTransactionsException(config.name(), id, code, participant,
                    message);
            case PARTICIPANT_REJECTED -> new ParticipantRejectedException(config.name(), id, code, participant,
                    message);
            case OVERFLOW -> new ArithmeticOverflowException(config.name(), id, code, participant, message);
            default -> new PreconditionFailedException(config.name(), id, code, participant, message);
        };
    }
}
