package dev.consistencykit.syncflag;

import dev.consistencykit.core.ConsistencyException;

/** The master document an update names does not exist; nothing was written. */
public class MasterMissingException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    /** An exception for master {@code masterId} of {@code collection}. */
    public MasterMissingException(String instanceName, String collection, Object masterId) {
        super(instanceName, masterId, "no master " + masterId + " in " + collection + "; nothing was written");
    }
}
