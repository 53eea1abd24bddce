package dev.consistencykit.logreconciliation;

import dev.consistencykit.core.OperationId;

/**
 * One committed change as a consumer reads it, in its account's sequence order.
 *
 * @param transactionId the transaction it belongs to
 * @param account       the account
 * @param seqId         its position in the account's log, from 1, without gaps
 * @param type          credit or debit
 * @param value         the amount
 * @param valid         false when its transaction was canceled (it then changed no balance)
 * @param cacheBal      the account's balance after it
 */
public record LedgerEntry(OperationId transactionId, String account, long seqId, ChangeType type, long value,
                          boolean valid, long cacheBal) {
}
