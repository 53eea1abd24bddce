package dev.consistencykit.core;

/**
 * An index an instance's safety rests on is absent from the server (or is not unique, or covers only part of the
 * collection): the instance refuses to write until {@code ensureIndexes()} has built it. Nothing was written.
 */
public class MissingIndexException extends UnsafeConfigurationException {

    private static final long serialVersionUID = 1L;

    /**
     * @param instanceName the instance that refused
     * @param message      which index, on which collection, and how to create it
     */
    public MissingIndexException(String instanceName, String message) {
        super(instanceName, message);
    }
}
