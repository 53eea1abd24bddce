package dev.consistencykit.twophase;

import dev.consistencykit.core.OperationId;

/**
 * Hooks called as transactions progress, for logging, alerting or metrics backends. Every method has a no-op
 * default. Called on the thread doing the work; an exception thrown by a listener is logged and ignored.
 */
public interface TwoPhaseListener {

    /** A transaction this instance drove reached {@code done}. */
    default void onCommitted(OperationId id) {
    }

    /** A transaction this instance drove reached {@code canceled}, with the stored reason code. */
    default void onCanceled(OperationId id, String reasonCode) {
    }

    /** Recovery took over a transaction found stale in {@code from} and drove it to {@code to}. */
    default void onRecovered(OperationId id, TransactionState from, TransactionState to) {
    }

    /** Another process took this instance's transaction over; this instance stopped driving it. */
    default void onLeaseLost(OperationId id) {
    }

    /** A committed transaction's participant refused its commit update; see {@link CommitStuckException}. */
    default void onCommitStuck(OperationId id, String participant, String error) {
    }
}
