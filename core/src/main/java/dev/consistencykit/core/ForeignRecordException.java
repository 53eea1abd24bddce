package dev.consistencykit.core;

/**
 * A record the instance reads back holds a value of a type its pattern never writes there (a string where a count is
 * kept, null where a list is): written by something else with access to the database. Nothing was written on the
 * strength of it. A pass over many records (recovery, a sweep) leaves such a record aside, logged, and goes on with
 * the others; a call about that record ends with this exception. The cause is what reading it threw.
 */
public class ForeignRecordException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param instanceName the instance that read the record
     * @param documentId   the operation concerned, may be {@code null}
     * @param message      what was being done
     * @param cause        what reading the record threw
     */
    public ForeignRecordException(String instanceName, Object documentId, String message, Throwable cause) {
        super(instanceName, documentId, message, cause);
    }

    /**
     * Whether {@code e} is what reading a record of a foreign shape throws in this library: a cast of a stored value
     * to the type the pattern writes, a BSON value read as another type, or a null where a value is always written.
     */
    public static boolean isForeignShape(RuntimeException e) {
        return e instanceof ClassCastException || e instanceof org.bson.BsonInvalidOperationException
                || e instanceof NullPointerException;
    }
}
