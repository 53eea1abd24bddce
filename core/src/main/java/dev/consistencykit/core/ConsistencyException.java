package dev.consistencykit.core;

import java.util.Optional;

/**
 * Root of every exception the toolkit throws. Unchecked.
 *
 * <p>Carries the name of the strategy instance that raised it and, where one is concerned, the id of the
 * document or operation, both of which also appear in the message. A {@code MongoException} that caused
 * it is kept as the cause.
 */
public class ConsistencyException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String instanceName;
    private final transient Object documentId;

    /**
     * @param instanceName the strategy instance name (or a component name), may be {@code null}
     * @param documentId   the document or operation id concerned, may be {@code null}
     * @param message      what went wrong
     * @param cause        the underlying exception, may be {@code null}
     */
    public ConsistencyException(String instanceName, Object documentId, String message, Throwable cause) {
        super(format(instanceName, documentId, message), cause);
        this.instanceName = instanceName;
        this.documentId = documentId;
    }

    /** Same as {@link #ConsistencyException(String, Object, String, Throwable)} without a cause. */
    public ConsistencyException(String instanceName, Object documentId, String message) {
        this(instanceName, documentId, message, null);
    }

    /** The name of the instance that raised this exception, if known. */
    public Optional<String> instanceName() {
        return Optional.ofNullable(instanceName);
    }

    /** The id of the document or operation concerned, if any. */
    public Optional<Object> documentId() {
        return Optional.ofNullable(documentId);
    }

    private static String format(String instanceName, Object documentId, String message) {
        StringBuilder sb = new StringBuilder();
        if (instanceName != null) {
            sb.append('[').append(instanceName).append("] ");
        }
        sb.append(message);
        if (documentId != null) {
            sb.append(" (id=").append(documentId).append(')');
        }
        return sb.toString();
    }
}
