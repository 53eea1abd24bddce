package dev.consistencykit.syncflag;

import com.mongodb.MongoException;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.spi.MongoErrors;

/**
 * The server refused a master update (for example {@code $inc} on a string); nothing was written. The server's error
 * is the cause.
 */
public class UpdateRejectedException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    /** An exception for master {@code masterId}. */
    public UpdateRejectedException(String instanceName, Object masterId, MongoException cause) {
        super(instanceName, masterId, "the server refused the update of master " + masterId + ": "
                + MongoErrors.serverSaid(cause) + "; nothing was written", cause);
    }
}
