package dev.consistencykit.core;

/**
 * A configuration that would make the toolkit's guarantees false, such as an unacknowledged
 * ({@code w:0}) write concern, under which the server silently drops writes and no outcome can be
 * classified. Raised at construction time, before anything is written.
 */
public class UnsafeConfigurationException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param instanceName the instance being configured
     * @param message      what is unsafe and how to fix it
     */
    public UnsafeConfigurationException(String instanceName, String message) {
        super(instanceName, null, message);
    }

    /**
     * @param instanceName the instance being configured
     * @param message      what is unsafe and how to fix it
     * @param cause        the server's answer that showed it
     */
    public UnsafeConfigurationException(String instanceName, String message, Throwable cause) {
        super(instanceName, null, message, cause);
    }
}
