package dev.consistencykit.twophase;

import java.math.BigInteger;
import java.util.Objects;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;

/**
 * A bank transfer of {@code amount} minor units (cents) from one account document to another, run by
 * {@link TwoPhaseCommit#transfer(Transfer)} in the configured {@link TransferVariant}.
 *
 * <p>Validated when submitted: the amount must be positive, the accounts different, the ids plain values.
 *
 * @param id     the transfer's id; the same id with the same accounts and amount is the same transfer
 * @param from   the source account's {@code _id}
 * @param to     the destination account's {@code _id}
 * @param amount minor units to move
 */
public record Transfer(OperationId id, Object from, Object to, long amount) {

    /** Checks the id for null; everything else is checked when the transfer is submitted. */
    public Transfer {
        Objects.requireNonNull(id, "id");
    }

    /** A transfer with an amount that must fit a {@code long}. */
    public static Transfer of(OperationId id, Object from, Object to, long amount) {
        return new Transfer(id, from, to, amount);
    }

    /**
     * A transfer whose amount comes from arbitrary-precision arithmetic.
     *
     * @throws InvalidInputException if {@code amount} does not fit a {@code long}
     */
    public static Transfer of(OperationId id, Object from, Object to, BigInteger amount) {
        Objects.requireNonNull(amount, "amount");
        if (amount.bitLength() > 63) {
            throw new InvalidInputException(null, "amount", "amount must fit a 64-bit long, was " + amount);
        }
        return new Transfer(id, from, to, amount.longValueExact());
    }
}
