package dev.consistencykit.versioning;

import java.util.Locale;

/**
 * The states of a change set, under lower-case names ({@link #stored()}) like every pattern's states:
 * {@code staged → committed}, and {@code staged → abandoned} (its base moved on, or recovery found its documents
 * incomplete). A staged change set is recorded on its root; committed and abandoned ones are counted. The same names
 * key {@code status().counts()} and are the {@code state} of an {@link dev.consistencykit.core.OperationResult}.
 */
public enum VersionState {
    /** Its item versions are being written; recorded on the root, invisible to readers. */
    STAGED,
    /** Its version is the root's committed version (or an older one). Terminal. */
    COMMITTED,
    /** Given up: its item versions deleted, no reader ever saw them. Terminal. */
    ABANDONED;

    /** The name in status counts and results: the constant's name in lower case. */
    public String stored() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Whether no further transition can happen. */
    public boolean isTerminal() {
        return this != STAGED;
    }

    /**
     * The state named {@code name}.
     *
     * @throws IllegalArgumentException for a name no state has
     */
    public static VersionState fromStored(String name) {
        for (VersionState s : values()) {
            if (s.stored().equals(name)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown change set state: " + name);
    }
}
