package dev.consistencykit.core;

/**
 * A caller-supplied operation id was reused for a different change. Submitting the same id with the same
 * change is idempotent and returns the existing operation; a different change under an existing id is
 * refused with this exception and nothing is written.
 */
public class IdempotencyConflictException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param instanceName the strategy instance
     * @param operationId  the reused id
     * @param message      what differs
     */
    public IdempotencyConflictException(String instanceName, Object operationId, String message) {
        super(instanceName, operationId, message);
    }
}
