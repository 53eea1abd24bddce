package dev.consistencykit.twophase;

/** How the bank-transfer preset moves money. */
public enum TransferVariant {
    /**
     * The default. Prepare debits the source, guarded by {@code balance >= amount}, and only marks the destination;
     * commit credits the destination. An uncommitted credit is never visible, so it can never be spent; a reader
     * may briefly see the money in neither account.
     */
    RESERVE_THEN_CREDIT,
    /**
     * MongoDB's published recipe: prepare changes both balances; rollback reverses them. A reader may see the credit
     * before the transaction commits, and if it is then canceled the reversal can take a destination that already
     * spent it below zero.
     */
    APPLY_AT_PREPARE
}
