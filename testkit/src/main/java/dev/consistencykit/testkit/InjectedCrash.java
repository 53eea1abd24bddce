package dev.consistencykit.testkit;

/**
 * The simulated death of the process at a write site. An {@link Error}, so that library code, which never catches
 * {@code Error} or {@code Throwable}, cannot swallow it: it unwinds to the test like a real crash ends a process.
 */
public final class InjectedCrash extends Error {

    private static final long serialVersionUID = 1L;

    /** @param message where and how the process died */
    public InjectedCrash(String message) {
        super(message, null, false, false);
    }
}
