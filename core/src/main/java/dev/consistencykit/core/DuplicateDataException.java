package dev.consistencykit.core;

import dev.consistencykit.core.spi.RequiredIndexes;

/**
 * {@code ensureIndexes()} could not build a unique index because documents already share a key it must keep unique
 * (written while the index was missing). The message lists them, up to
 * {@link RequiredIndexes#MAX_REPORTED_DUPLICATES} keys with the ids of the documents holding each; the operations
 * guide says how to repair them.
 */
public class DuplicateDataException extends UnsafeConfigurationException {

    private static final long serialVersionUID = 1L;

    /**
     * @param instanceName the instance whose index could not be built
     * @param message      the index and the duplicates found
     * @param cause        the server's refusal
     */
    public DuplicateDataException(String instanceName, String message, Throwable cause) {
        super(instanceName, message, cause);
    }
}
