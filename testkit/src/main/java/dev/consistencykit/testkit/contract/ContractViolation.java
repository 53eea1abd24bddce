package dev.consistencykit.testkit.contract;

/** Thrown by a {@link ContractCheck} when the server did not behave as the patterns need. */
public final class ContractViolation extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** @param seen what the check saw instead */
    public ContractViolation(String seen) {
        super(seen);
    }

    /** Throws a violation with {@code message} unless {@code condition} holds. */
    public static void require(boolean condition, String message) {
        if (!condition) {
            throw new ContractViolation(message);
        }
    }
}
