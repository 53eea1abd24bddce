package dev.consistencykit.core;

import java.util.Objects;

import org.bson.types.ObjectId;

import dev.consistencykit.core.spi.Ids;

/**
 * The id of one operation (a transaction, a job, a change set…), stored as the {@code _id} of the
 * document that records its intent. A caller that supplies its own id makes {@code submit} and
 * {@code apply} idempotent: the same id with the same change returns the existing operation.
 *
 * <p>The value is a non-blank string, an integral number or an {@link ObjectId}; never a document or
 * anything else that could carry a query operator.
 *
 * @param value the id as stored in MongoDB
 */
public record OperationId(Object value) {

    /**
     * @throws InvalidInputException if {@code value} is not a non-blank string, an integral number or an ObjectId
     */
    public OperationId {
        Ids.operationId(null, "operationId", value);
        if (value instanceof Integer || value instanceof Short || value instanceof Byte) {
            value = ((Number) value).longValue();
        }
    }

    /** An id from a string. */
    public static OperationId of(String value) {
        return new OperationId(value);
    }

    /** An id from a number. */
    public static OperationId of(long value) {
        return new OperationId(value);
    }

    /** An id from an ObjectId. */
    public static OperationId of(ObjectId value) {
        return new OperationId(Objects.requireNonNull(value, "value"));
    }

    /** A new, unique id (an ObjectId). */
    public static OperationId random() {
        return new OperationId(new ObjectId());
    }

    @Override
    public String toString() {
        return String.valueOf(value);
    }
}
