package dev.consistencykit.core.spi;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Calls an application's listener hook so that it cannot break the operation it observes: a runtime exception it
 * throws is logged at {@code warn} and ignored (an {@link Error} is never caught).
 */
public final class Listeners {

    private static final Logger LOG = LoggerFactory.getLogger(Listeners.class);

    private Listeners() {
    }

    /** Runs {@code hook}; logs and ignores a runtime exception from it, naming instance {@code instanceName}. */
    public static void call(String instanceName, Runnable hook) {
        try {
            hook.run();
        } catch (RuntimeException e) {
            LOG.warn("[{}] listener failed: {}", instanceName, Throwables.describe(e));
        }
    }
}
