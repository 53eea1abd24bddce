package dev.consistencykit.core.spi;

import java.util.Set;

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

import dev.consistencykit.core.OutcomeUnknownException;
import dev.consistencykit.core.ServerUnavailableException;
import dev.consistencykit.core.RetryPolicy;

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
        /**
         * The server refused a single-document request because a concurrent writer held what it needed
         * ({@linkplain #isWriteConflict a write conflict}: MongoDB's {@code WriteConflict}, a deadlock or a
         * serialization failure on DocumentDB): the request was rolled back whole, nothing was written, and one of
         * the writers it met went through. Retrying is safe, and under contention takes more attempts than a lost
         * connection: {@link dev.consistencykit.core.RetryPolicy} retries it more often, within the call's deadline.
         * (A conflict in a batch of several documents is {@link #TRANSIENT_MAYBE_APPLIED}: writes before it may have
         * applied.)
         */
        CONFLICT,
        /** Anything else: a bug, a rejected update, an authorisation error. Retrying will not help. */
        PERMANENT
    }

    private MongoErrors() {
    }

    /** Classifies {@code e}. */
    public static Kind classify(MongoException e) {
        if (isWriteConflict(e)) {
            // before the duplicate check: a batch refused in part by a conflict has writes still to send, and may
            // have applied others; a single document's write was rolled back whole
            return e instanceof MongoBulkWriteException ? Kind.TRANSIENT_MAYBE_APPLIED : Kind.CONFLICT;
        }
        if (isDuplicateKey(e)) {
            return Kind.DUPLICATE_KEY;
        }
        if (e instanceof MongoOperationTimeoutException || isServerInterruption(e)) {
            // the call's own deadline passed, or the server stopped the statement: what it sent may have been applied
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

    /** MongoDB's {@code MaxTimeMSExpired}, which a write error may carry as well as a command error. */
    static final int MAX_TIME_MS_EXPIRED = 50;
    /**
     * PostgreSQL's codes, as DocumentDB packs them, for a statement the server stopped or a node it could not reach:
     * {@code query_canceled} (57014: a statement timeout, which the distributed engine returns as a write error when
     * the call's time runs out while a worker waits for a lock), {@code lock_not_available} (55P03), an administrator's
     * or a crash's shutdown and a node not yet accepting connections (57P01–57P03), and the connection errors between
     * the coordinator and its workers (08000, 08001, 08003, 08006).
     */
    static final Set<Integer> POSTGRES_INTERRUPTIONS = Set.of(sqlState("57014"), sqlState("55P03"),
            sqlState("57P01"), sqlState("57P02"), sqlState("57P03"), sqlState("08000"), sqlState("08001"),
            sqlState("08003"), sqlState("08006"));

    /**
     * Whether the server stopped the request before it finished, for a reason retrying may not meet again: its time
     * ran out ({@code MaxTimeMSExpired} in a write error), or, on DocumentDB, PostgreSQL cancelled the statement or
     * lost a node ({@link #POSTGRES_INTERRUPTIONS}; under FerretDB's {@code InternalError}, its message says which).
     * What it sent may have been applied, as after a lost reply: a guarded retry decides.
     */
    static boolean isServerInterruption(MongoException e) {
        return anyServerError(e, MongoErrors::interruption);
    }

    private static boolean interruption(int code, String message) {
        if (code == MAX_TIME_MS_EXPIRED || POSTGRES_INTERRUPTIONS.contains(code)) {
            return true;
        }
        return code == INTERNAL_ERROR && message != null && message.contains("canceling statement due to");
    }

    /** MongoDB's {@code WriteConflict}: two writers met on one document; the loser's write did not apply. */
    static final int WRITE_CONFLICT = 112;
    /**
     * PostgreSQL's {@code serialization_failure} (SQLSTATE 40001) as DocumentDB reports it: the SQLSTATE's five
     * characters packed six bits each ({@code MAKE_SQLSTATE}), the lowest first.
     */
    static final int POSTGRES_SERIALIZATION_FAILURE = sqlState("40001");
    /** PostgreSQL's {@code deadlock_detected} (SQLSTATE 40P01), packed the same way. */
    static final int POSTGRES_DEADLOCK_DETECTED = sqlState("40P01");
    /** MongoDB's {@code InternalError}, under which FerretDB reports a PostgreSQL error of a whole command. */
    static final int INTERNAL_ERROR = 1;

    /**
     * Whether the server refused a request because a concurrent writer held what it needed, so that the request (or
     * the batch it was part of) was rolled back and may be sent again. Documented per server:
     * <ul>
     *   <li>MongoDB: {@code WriteConflict} (112), which a standalone retries inside the server and a sharded cluster
     *       may still return;</li>
     *   <li>DocumentDB behind FerretDB: a write error or command error whose code is PostgreSQL's SQLSTATE 40001 or
     *       40P01 as DocumentDB packs it; or, for an error of a whole command, {@code InternalError} (1), the only code
     *       FerretDB gives it, whose message is PostgreSQL's own for those two states, or the distributed engine's
     *       (Citus) when its deadlock detection cancelled one of the transactions a multi-shard command ran. The
     *       message is read here only because that server gives no other sign, and only under that code.</li>
     * </ul>
     * Where a batch spans several documents, writes before the refused one may have applied: a caller treats it as
     * an outcome not known, as after a lost reply.
     */
    public static boolean isWriteConflict(MongoException e) {
        return anyServerError(e, MongoErrors::conflict);
    }

    /**
     * Whether the server's error in {@code e} (a write error, any of a batch's, or a command error; its code and own
     * message, the message absent where the driver gives only a code) is one {@code test} accepts.
     */
    private static boolean anyServerError(MongoException e, java.util.function.BiPredicate<Integer, String> test) {
        if (e instanceof MongoBulkWriteException be) {
            for (BulkWriteError error : be.getWriteErrors()) {
                if (test.test(error.getCode(), error.getMessage())) {
                    return true;
                }
            }
            return false;
        }
        if (e instanceof MongoWriteException we) {
            return test.test(we.getError().getCode(), we.getError().getMessage());
        }
        if (e instanceof MongoCommandException ce) {
            return test.test(ce.getErrorCode(), ce.getErrorMessage());
        }
        return e instanceof MongoServerException && test.test(e.getCode(), null);
    }

    /**
     * Whether {@code e} says only that concurrent writers kept holding what one write needed until its retries ran
     * out: a {@linkplain #isWriteConflict write conflict} itself, or the {@link ServerUnavailableException} (nothing
     * written) or {@link OutcomeUnknownException} (an earlier attempt's reply was lost) a {@link RetryPolicy} gives
     * when its attempts ran out on conflicts. A pass over many records (a recovery, a sweep)
     * leaves such a record to its next pass and goes on with the others, as it does with a record another process
     * holds; anything else (a server that does not answer, a refusal, a deadline) ends the pass.
     */
    public static boolean isContention(RuntimeException e) {
        Throwable cause = e instanceof OutcomeUnknownException || e instanceof ServerUnavailableException
                ? e.getCause() : e;
        return cause instanceof MongoException m && isWriteConflict(m);
    }

    private static boolean conflict(int code, String message) {
        if (code == WRITE_CONFLICT || code == POSTGRES_SERIALIZATION_FAILURE || code == POSTGRES_DEADLOCK_DETECTED) {
            return true;
        }
        return code == INTERNAL_ERROR && message != null
                && (message.contains("deadlock detected") || message.contains("could not serialize access")
                || message.contains("involved in a distributed deadlock"));
    }

    /** PostgreSQL's {@code MAKE_SQLSTATE}: each character's six low bits of {@code c - '0'}, the first lowest. */
    static int sqlState(String state) {
        int code = 0;
        for (int i = 0; i < 5; i++) {
            code |= ((state.charAt(i) - '0') & 0x3F) << (6 * i);
        }
        return code;
    }

    /**
     * What the server said, for a reason recorded or logged: its code and its own message ({@code code 121: Document
     * failed validation}), without the driver's preamble (server address, error category), which a reason cut to a
     * readable length would otherwise keep in place of the server's words. A batch gives its first write error.
     */
    public static String serverSaid(MongoException e) {
        if (e instanceof MongoBulkWriteException be && !be.getWriteErrors().isEmpty()) {
            BulkWriteError first = be.getWriteErrors().get(0);
            return "code " + first.getCode() + ": " + first.getMessage();
        }
        if (e instanceof MongoWriteException we) {
            return "code " + we.getError().getCode() + ": " + we.getError().getMessage();
        }
        if (e instanceof MongoCommandException ce) {
            return "code " + ce.getErrorCode() + ": " + ce.getErrorMessage();
        }
        return "code " + e.getCode() + ": " + e.getMessage();
    }

    /** Whether {@code e} is transient, so that retrying the (guarded) request may succeed. */
    public static boolean isTransient(MongoException e) {
        Kind kind = classify(e);
        return kind == Kind.TRANSIENT_NOT_SENT || kind == Kind.TRANSIENT_MAYBE_APPLIED || kind == Kind.CONFLICT;
    }

    /**
     * The fields of the unique index whose violation {@code e} reports, when the server says which (MongoDB puts a
     * {@code keyPattern} in the error's details or reply); empty when it is no duplicate key or the server does not
     * say. Never read from the message's text, which each server words its own way: a caller that must know whether the
     * {@code _id} was the duplicate and gets nothing here reads the document back.
     */
    public static java.util.Optional<java.util.Set<String>> duplicateKeyFields(MongoException e) {
        if (!isDuplicateKey(e)) {
            return java.util.Optional.empty();
        }
        org.bson.BsonValue pattern = null;
        if (e instanceof MongoWriteException we) {
            pattern = we.getError().getDetails().get("keyPattern");
        } else if (e instanceof MongoCommandException ce) {
            pattern = ce.getResponse().get("keyPattern");
        } else if (e instanceof MongoBulkWriteException be && be.getWriteErrors().size() == 1) {
            pattern = be.getWriteErrors().get(0).getDetails().get("keyPattern");
        }
        return pattern != null && pattern.isDocument() && !pattern.asDocument().isEmpty()
                ? java.util.Optional.of(java.util.Set.copyOf(pattern.asDocument().keySet()))
                : java.util.Optional.empty();
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
