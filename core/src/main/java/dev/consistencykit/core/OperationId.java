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

    /**
     * The ids that print as {@code printed} wherever this library prints one: {@link #toString()} (a string bare, a
     * number as digits, an ObjectId as its 24 hex digits), a log line ({@code 'j1'}: a string in single quotes), JSON
     * ({@code {"$oid": "…"}}, {@code {"$numberLong": "…"}}) or the shell ({@code ObjectId("…")}). Text that two ids
     * print as names both: 24 hex digits are an ObjectId and that string, digits a number and that string; an
     * operator's selection then matches whichever the queue holds.
     *
     * @throws InvalidInputException if {@code printed} names no id (blank)
     */
    public static java.util.List<OperationId> printedAs(String printed) {
        Objects.requireNonNull(printed, "printed");
        String text = printed.strip();
        java.util.regex.Matcher oid = PRINTED_OBJECT_ID.matcher(text);
        if (oid.matches()) {
            return java.util.List.of(new OperationId(new ObjectId(oid.group(1))));
        }
        java.util.regex.Matcher number = PRINTED_LONG.matcher(text);
        if (number.matches() && integral(number.group(1)) != null) {
            return java.util.List.of(new OperationId(integral(number.group(1))));
        }
        if (text.length() >= 2 && text.startsWith("'") && text.endsWith("'")) {
            return java.util.List.of(new OperationId(text.substring(1, text.length() - 1)));
        }
        java.util.List<OperationId> ids = new java.util.ArrayList<>();
        if (ObjectId.isValid(text) && text.length() == 24) {
            ids.add(new OperationId(new ObjectId(text)));
        } else if (integral(text) != null) {
            ids.add(new OperationId(integral(text)));
        }
        ids.add(new OperationId(text));
        return java.util.List.copyOf(ids);
    }

    /** {@code text} as a long if it is one written in decimal digits, else null. */
    private static Long integral(String text) {
        if (!text.matches("-?[0-9]{1,19}")) {
            return null;
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException beyondLong) {
            return null;
        }
    }

    private static final java.util.regex.Pattern PRINTED_OBJECT_ID = java.util.regex.Pattern.compile(
            "(?:ObjectId\\(\\s*[\"']|\\{\\s*\"\\$oid\"\\s*:\\s*\")([0-9a-fA-F]{24})(?:[\"']\\s*\\)|\"\\s*})");
    private static final java.util.regex.Pattern PRINTED_LONG = java.util.regex.Pattern.compile(
            "(?:NumberLong\\(\\s*[\"']?|\\{\\s*\"\\$numberLong\"\\s*:\\s*\")(-?[0-9]{1,19})(?:[\"']?\\s*\\)|\"\\s*})");

    /** A new, unique id (an ObjectId). */
    public static OperationId random() {
        return new OperationId(new ObjectId());
    }

    @Override
    public String toString() {
        return String.valueOf(value);
    }
}
