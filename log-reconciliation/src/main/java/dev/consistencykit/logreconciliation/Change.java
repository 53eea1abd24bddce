package dev.consistencykit.logreconciliation;

import java.util.Objects;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.spi.Ids;

/**
 * One account change of a ledger transaction: a credit or a debit of a positive amount in integer minor units.
 *
 * @param account the account's id (a non-blank string)
 * @param type    credit or debit
 * @param value   the amount, {@code > 0}
 */
public record Change(String account, ChangeType type, long value) {

    /**
     * @throws InvalidInputException for a blank or {@code $}-prefixed account id, or a value {@code <= 0}
     */
    public Change {
        checkAccount(null, account);
        Objects.requireNonNull(type, "type");
        if (value <= 0) {
            throw new InvalidInputException(null, "value", "value must be > 0 (a debit is a DEBIT of a positive"
                    + " amount), was " + value + " for account " + account);
        }
    }

    /**
     * Checks an account id: a non-blank string not starting with {@code $}.
     *
     * @return {@code account}
     * @throws InvalidInputException if it is not acceptable
     */
    public static String checkAccount(String instanceName, String account) {
        Ids.documentId(instanceName, "account", account);
        if (account.startsWith("$")) {
            throw new InvalidInputException(instanceName, "account", "account must not start with '$', was '"
                    + account + "'");
        }
        return account;
    }

    /** A credit of {@code value} to {@code account}. */
    public static Change credit(String account, long value) {
        return new Change(account, ChangeType.CREDIT, value);
    }

    /** A debit of {@code value} from {@code account}. */
    public static Change debit(String account, long value) {
        return new Change(account, ChangeType.DEBIT, value);
    }

    /** A change of a type given by name ({@code "credit"}, {@code "debit"}). */
    public static Change of(String account, String type, long value) {
        return new Change(account, ChangeType.parse(type), value);
    }

    /** The value with its sign: positive for a credit, negative for a debit. */
    public long signedValue() {
        return type.sign() * value;
    }
}
