package dev.consistencykit.core.spi;

/**
 * The deadline of the public call running in this thread: set by {@link Calls} at the outermost call, read by whatever
 * would start a step (a retry, another attempt) that the deadline cannot hold.
 */
public final class Deadline {

    private static final ThreadLocal<Long> DEADLINE = new ThreadLocal<>();

    private Deadline() {
    }

    /**
     * Nanoseconds left before the deadline of the call running in this thread, or {@link Long#MAX_VALUE} outside of
     * one.
     */
    public static long remainingNanos() {
        Long deadline = DEADLINE.get();
        return deadline == null ? Long.MAX_VALUE : deadline - System.nanoTime();
    }

    /** Whether a call running in this thread has set a deadline. */
    static boolean isSet() {
        return DEADLINE.get() != null;
    }

    /** Sets this thread's deadline {@code nanos} from now. */
    static void setIn(long nanos) {
        DEADLINE.set(System.nanoTime() + nanos);
    }

    /** Clears this thread's deadline. */
    static void clear() {
        DEADLINE.remove();
    }
}
