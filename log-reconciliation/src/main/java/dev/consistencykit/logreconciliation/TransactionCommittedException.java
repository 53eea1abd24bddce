package dev.consistencykit.logreconciliation;

import dev.consistencykit.core.ConsistencyException;

/** A transaction cannot be canceled because the committer already decided it; reverse it instead. */
public class TransactionCommittedException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    /** An exception for transaction {@code id}. */
    public TransactionCommittedException(String instanceName, Object id) {
        super(instanceName, id, "transaction " + id + " is already decided by the committer; append a reversal"
                + " with reverse() instead");
    }
}
