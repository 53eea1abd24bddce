package dev.consistencykit.core.spi;

/**
 * The typed outcome of a guarded single-document update, decided by re-reading the document when the guard
 * did not match, instead of a bare {@code matchedCount == 0}.
 */
public enum UpdateOutcome {
    /** This call changed the document. */
    APPLIED,
    /**
     * The change was already there (an earlier attempt, possibly one whose acknowledgement was lost, or another
     * process applied it); this call changed nothing. For an idempotent request this counts as success.
     */
    ALREADY_APPLIED,
    /** The document exists but the guard refused the change (wrong state, insufficient balance, lost lease…). */
    GUARD_FAILED,
    /** No document has that id. */
    MISSING;

    /** Whether the change is in place after the call, by this call or an earlier one. */
    public boolean isInPlace() {
        return this == APPLIED || this == ALREADY_APPLIED;
    }
}
