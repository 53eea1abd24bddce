package dev.consistencykit.logreconciliation;

import dev.consistencykit.core.OperationId;

/** Hooks called as transactions are appended and committed. No-op defaults; a listener's exception is ignored. */
public interface LedgerListener {

    /** A transaction was appended (uncommitted), after {@code collisions} sequence-number collisions. */
    default void onAppended(OperationId id, int collisions) {
    }

    /** A transaction was committed; {@code valid} false when it was canceled (by request or the overdraft rule). */
    default void onCommitted(OperationId id, boolean valid, String reason) {
    }

    /** {@code reconcile} found a mismatch between an account's cache and its log. */
    default void onMismatch(String account, String problem) {
    }
}
