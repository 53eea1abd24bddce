package dev.consistencykit.logreconciliation;

import dev.consistencykit.core.ConsistencyException;

/** No transaction has the id given. */
public class UnknownTransactionException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    /** An exception for transaction {@code id}. */
    public UnknownTransactionException(String instanceName, Object id) {
        super(instanceName, id, "no transaction " + id + " in the ledger");
    }
}
