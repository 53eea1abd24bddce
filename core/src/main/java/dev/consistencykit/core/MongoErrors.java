package dev.consistencykit.core;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.MongoNodeIsRecoveringException;
import com.mongodb.MongoNotPrimaryException;
import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.MongoServerException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoSocketOpenException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.MongoWriteException;
import com.mongodb.bulk.BulkWriteError;

/**
 * Classifies driver errors with the driver's own tools: error labels, {@link ErrorCategory} and exception
 * types. Never by message text.
 *
 * <p>Stateless and thread-safe.
 */
public final class MongoErrors {

    /** The label the driver and server put on errors after which a write may be retried. */
    public static final String RETRYABLE_WRITE_ERROR_LABEL = "RetryableWriteError";

    /** What an error means for the request that raised it. */
    public enum Kind {
        /** A unique index refused the write (code 11000): nothing was written. */
        DUPLICATE_KEY,
        /**
         * A transient failure known to have happened before the request was sent (no server selected, no
         * connection opened): nothing was written; retrying is safe.
         */
        TRANSIENT_NOT_SENT,
        /**
         * A transient failure after the request may have been sent (connection dropped, primary stepped down,
         * timeout): the write may or may not have applied; retrying a guarded write is safe.
         */
        TRANSIENT_MAYBE_APPLIED,
        /** Anything else: a bug, a rejected update, an authorisation error. Retrying will not help. */
        PERMANENT
    }

    private MongoErrors() {
    }

    /** Classifies {@code e}. */
    public static Kind classify(MongoException e) {
        if (isDuplicateKey(e)) {
            return Kind.DUPLICATE_KEY;
        }
        if (e instanceof MongoOperationTimeoutException) {
            // the call's own deadline passed: what it sent may have been applied
            return Kind.TRANSIENT_MAYBE_APPLIED;
        }
        if (e instanceof MongoSocketOpenException || e instanceof MongoTimeoutException) {
            return Kind.TRANSIENT_NOT_SENT;
        }
        if (e.hasErrorLabel(RETRYABLE_WRITE_ERROR_LABEL)
                || e.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL)
                || e.hasErrorLabel(MongoException.UNKNOWN_TRANSACTION_COMMIT_RESULT_LABEL)
                || e instanceof MongoSocketException
                || e instanceof MongoNotPrimaryException
                || e instanceof MongoNodeIsRecoveringException
                || e instanceof MongoExecutionTimeoutException
                || e instanceof MongoWriteConcernException) {
            return Kind.TRANSIENT_MAYBE_APPLIED;
        }
        return Kind.PERMANENT;
    }

    /** Whether {@code e} is transient, so that retrying the (guarded) request may succeed. */
    public static boolean isTransient(MongoException e) {
        Kind kind = classify(e);
        return kind == Kind.TRANSIENT_NOT_SENT || kind == Kind.TRANSIENT_MAYBE_APPLIED;
    }

    /**
     * Whether {@code e} reports a violation of the {@code _id} index: another document has this {@code _id}. A
     * violation of another unique index (one of the application's) is not, and says nothing about the {@code _id}.
     */
    public static boolean isDuplicateId(MongoException e) {
        if (!isDuplicateKey(e)) {
            return false;
        }
        String message = String.valueOf(e.getMessage());
        if (e instanceof MongoWriteException we && we.getError().getDetails().get("keyPattern") instanceof
                org.bson.BsonDocument pattern) {
            return pattern.keySet().equals(java.util.Set.of("_id"));
        }
        return message.contains("index: _id_ ") || message.contains("index: _id_\"") || message.endsWith("_id_");
    }

    /** Whether {@code e} reports a unique-index violation, whichever API raised it. */
    public static boolean isDuplicateKey(MongoException e) {
        if (e instanceof MongoWriteException we) {
            return we.getError().getCategory() == ErrorCategory.DUPLICATE_KEY;
        }
        if (e instanceof MongoBulkWriteException be) {
            for (BulkWriteError error : be.getWriteErrors()) {
                if (error.getCategory() == ErrorCategory.DUPLICATE_KEY) {
                    return true;
                }
            }
            return false;
        }
        if (e instanceof MongoCommandException ce) {
            return ErrorCategory.fromErrorCode(ce.getErrorCode()) == ErrorCategory.DUPLICATE_KEY;
        }
        // a failed unique index build arrives as a WriteConcernException carrying the server's code
        return e instanceof MongoServerException && ErrorCategory.fromErrorCode(e.getCode()) == ErrorCategory.DUPLICATE_KEY;
    }
}
