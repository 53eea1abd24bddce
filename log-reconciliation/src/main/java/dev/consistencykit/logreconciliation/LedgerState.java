package dev.consistencykit.logreconciliation;

import java.util.Locale;

/**
 * The states of a ledger transaction, under lower-case names ({@link #stored()}) like every pattern's states:
 * {@code uncommitted → committed}, and {@code uncommitted → canceled} (by {@link Ledger#cancel} before the committer
 * reaches it, or by the committer under the overdraft rule).
 *
 * <p>A transaction document stores them in two fields, because the two facts change apart: {@code proc} says whether
 * the committer has processed it ({@code uncommitted} or {@code committed}), {@code state} whether its changes count
 * ({@code valid}, or {@code canceled}). A canceled transaction is {@code canceled} whatever its {@code proc}. The same
 * names key {@code status().counts()} and are the {@code state} of an {@link dev.consistencykit.core.OperationResult}.
 */
public enum LedgerState {
    /** Appended; the committer has not processed it yet. Its changes count (unless it is canceled meanwhile). */
    UNCOMMITTED,
    /** Processed by the committer: its changes are in the account caches. Terminal. */
    COMMITTED,
    /** Its changes count for nothing: canceled by request before the commit, or by the overdraft rule. Terminal. */
    CANCELED;

    /** Stored in {@code state} while a transaction's changes count. */
    public static final String VALID = "valid";

    /** The name stored in the database, in status counts and in results: the constant's name in lower case. */
    public String stored() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Whether no further transition can happen. */
    public boolean isTerminal() {
        return this != UNCOMMITTED;
    }

    /**
     * The state stored under {@code name}.
     *
     * @throws IllegalArgumentException for a name no state is stored under
     */
    public static LedgerState fromStored(String name) {
        for (LedgerState s : values()) {
            if (s.stored().equals(name)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown ledger transaction state: " + name);
    }
}
