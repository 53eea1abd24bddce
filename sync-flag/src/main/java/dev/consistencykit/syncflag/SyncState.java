package dev.consistencykit.syncflag;

import java.util.Locale;

/**
 * The states of a master update, under lower-case names ({@link #stored()}) like every pattern's states:
 * {@code syncing → synced}. A master is {@code syncing} while its flag ({@link SyncFlagConfig#FLAG_FIELD}) is set, that
 * is while one propagation of its copied fields is in flight, and {@code synced} once every copy has its value. The
 * same names key {@code status().counts()} and are the {@code state} of an
 * {@link dev.consistencykit.core.OperationResult}.
 */
public enum SyncState {
    /** The master changed and is flagged; its copies are being brought to its value. */
    SYNCING,
    /** Every copy has the master's value; the flag is cleared. Terminal. */
    SYNCED;

    /** The name in status counts and results: the constant's name in lower case. */
    public String stored() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Whether no further transition can happen. */
    public boolean isTerminal() {
        return this == SYNCED;
    }

    /**
     * The state named {@code name}.
     *
     * @throws IllegalArgumentException for a name no state has
     */
    public static SyncState fromStored(String name) {
        for (SyncState s : values()) {
            if (s.stored().equals(name)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown sync state: " + name);
    }
}
