package dev.consistencykit.logreconciliation;

import java.util.Locale;

import dev.consistencykit.core.InvalidInputException;

/** What a change does to its account's balance. */
public enum ChangeType {
    /** Adds the value. */
    CREDIT(1),
    /** Subtracts the value; subject to the overdraft rule when one is configured. */
    DEBIT(-1);

    private final int sign;

    ChangeType(int sign) {
        this.sign = sign;
    }

    /** +1 for a credit, -1 for a debit. */
    public int sign() {
        return sign;
    }

    /** The opposite type, for a compensating change. */
    public ChangeType reversed() {
        return this == CREDIT ? DEBIT : CREDIT;
    }

    /**
     * The type named {@code name} (case-insensitive).
     *
     * @throws InvalidInputException for an unknown name
     */
    public static ChangeType parse(String name) {
        if (name != null) {
            for (ChangeType t : values()) {
                if (t.name().equals(name.toUpperCase(Locale.ROOT))) {
                    return t;
                }
            }
        }
        throw new InvalidInputException(null, "type", "unknown change type '" + name + "' (known: CREDIT, DEBIT)");
    }
}
