package dev.consistencykit.core.spi;

/**
 * Describes an exception an application's code threw (a handler, a listener, an observer, a maintenance step) without
 * trusting its methods: {@code getMessage()} and {@code toString()} are the application's code and may throw
 * themselves, and a description made while handling a failure must not become a second, unhandled one.
 */
public final class Throwables {

    private Throwables() {
    }

    /**
     * {@code e} as {@link Throwable#toString()} says it ({@code java.lang.IllegalStateException: message}), or, when its
     * {@code toString()} throws, its class name and a note of what it threw.
     */
    public static String describe(Throwable e) {
        try {
            return e.toString();
        } catch (RuntimeException thrownByToString) {
            return e.getClass().getName() + " (could not be described: its toString() threw "
                    + thrownByToString.getClass().getName() + ")";
        }
    }
}
