package dev.consistencykit.logreconciliation;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;

/**
 * A ledger transaction: the account changes it makes, written as one document. A transaction declared as a transfer
 * must sum to zero.
 *
 * <pre>{@code
 * LedgerTransaction.transfer("alice", "bob", 2_500);                                  // a two-account transfer
 * LedgerTransaction.of(Change.debit("alice", 90), Change.credit("bob", 60), Change.credit("fees", 30)).asTransfer();
 * LedgerTransaction.of(Change.credit("alice", 10_000)).withId(OperationId.of("deposit-17"));   // idempotent
 * }</pre>
 *
 * @param id       the transaction id
 * @param changes  the changes, at most one per account
 * @param transfer whether the changes must sum to zero
 */
public record LedgerTransaction(OperationId id, List<Change> changes, boolean transfer) {

    /**
     * Validates.
     *
     * @throws InvalidInputException for no changes, an account changed twice, a transfer that does not sum to zero,
     *                               or a sum that overflows
     */
    public LedgerTransaction {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(changes, "changes");
        changes = List.copyOf(changes);
        if (changes.isEmpty()) {
            throw new InvalidInputException(null, "changes", "changes must not be empty: a transaction needs at least one change");
        }
        Set<String> accounts = new HashSet<>();
        long sum = 0;
        for (Change c : changes) {
            if (!accounts.add(c.account())) {
                throw new InvalidInputException(null, "changes", "account " + c.account()
                        + " appears twice in transaction " + id.value() + "; merge its changes into one");
            }
            try {
                sum = Math.addExact(sum, c.signedValue());
            } catch (ArithmeticException e) {
                throw new InvalidInputException(null, "changes", "the changes of transaction " + id.value()
                        + " overflow a long");
            }
        }
        if (transfer && sum != 0) {
            throw new InvalidInputException(null, "changes", "transfer " + id.value() + " does not sum to zero: "
                    + sum);
        }
    }

    /** A transaction of {@code changes} with a random id. */
    public static LedgerTransaction of(Change... changes) {
        return new LedgerTransaction(OperationId.random(), List.of(changes), false);
    }

    /** A transfer of {@code value} from {@code from} to {@code to}, with a random id. */
    public static LedgerTransaction transfer(String from, String to, long value) {
        return new LedgerTransaction(OperationId.random(), List.of(Change.debit(from, value), Change.credit(to, value)),
                true);
    }

    /** The same transaction with a caller-supplied id, for idempotent appends. */
    public LedgerTransaction withId(OperationId operationId) {
        return new LedgerTransaction(operationId, changes, transfer);
    }

    /** The same changes, declared as a transfer (checked to sum to zero). */
    public LedgerTransaction asTransfer() {
        return new LedgerTransaction(id, changes, true);
    }
}
