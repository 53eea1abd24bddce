package dev.consistencykit.core;

/**
 * Input was rejected before anything was written: the database is unchanged.
 *
 * <p>The message names the offending field and the value that was given.
 */
public class InvalidInputException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    private final String field;

    /**
     * @param instanceName the instance that validated the input, may be {@code null}
     * @param field        the name of the field (or argument) that was rejected
     * @param message      why it was rejected, including the value
     */
    public InvalidInputException(String instanceName, String field, String message) {
        super(instanceName, null, message);
        this.field = field;
    }

    /** The name of the rejected field or argument. */
    public String field() {
        return field;
    }
}
