package dev.consistencykit.twophase;

import java.util.Arrays;
import java.util.Set;

/**
 * The states of a two-phase transaction, stored in its {@code state} field under their lower-case names:
 * {@code initial → pending → applied → done}, and {@code pending → canceling → canceled}.
 */
public enum TransactionState {
    /** Recorded by {@code submit()}, waiting for a worker to claim it. */
    INITIAL,
    /** Claimed; participants are being prepared. The commit-or-cancel decision is not made yet. */
    PENDING,
    /** Decided: committed. Participants are being settled with their commit updates. */
    APPLIED,
    /** Terminal: committed and every participant settled. */
    DONE,
    /** Decided: canceled. Participants are being rolled back. */
    CANCELING,
    /** Terminal: canceled, every participant rolled back or fenced; no net effect anywhere. */
    CANCELED;

    /** The states a transaction leaves only by being driven further. */
    public static final Set<TransactionState> IN_FLIGHT = Set.of(INITIAL, PENDING, APPLIED, CANCELING);

    /** The name stored in the database. */
    public String stored() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** Whether no further transition can happen. */
    public boolean isTerminal() {
        return this == DONE || this == CANCELED;
    }

    /** Whether {@code next} may directly follow this state. */
    public boolean canMoveTo(TransactionState next) {
        return switch (this) {
            case INITIAL -> next == PENDING;
            case PENDING -> next == APPLIED || next == CANCELING;
            case APPLIED -> next == DONE;
            case CANCELING -> next == CANCELED;
            case DONE, CANCELED -> false;
        };
    }

    /** The state stored under {@code name}. */
    public static TransactionState fromStored(String name) {
        return Arrays.stream(values()).filter(s -> s.stored().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown transaction state: " + name));
    }
}
