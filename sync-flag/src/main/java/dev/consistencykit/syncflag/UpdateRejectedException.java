package dev.consistencykit.syncflag;

import com.mongodb.MongoException;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.spi.MongoErrors;

/**
 * A master update was refused, nothing written: by the server (for example {@code $inc} on a string; the server's error
 * is the cause), or because the master's version field holds what no version can be compared with (an array, NaN, a
 * fraction: the message says how to repair it).
 */
public class UpdateRejectedException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    /** An exception for master {@code masterId} whose update this library refused before the server saw it. */
    public UpdateRejectedException(String instanceName, Object masterId, String reason) {
        super(instanceName, masterId, reason + "; nothing was written");
    }

    /** An exception for master {@code masterId}. */
    public UpdateRejectedException(String instanceName, Object masterId, MongoException cause) {
        super(instanceName, masterId, "the server refused the update of master " + masterId + ": "
                + MongoErrors.serverSaid(cause) + "; nothing was written", cause);
    }
}
