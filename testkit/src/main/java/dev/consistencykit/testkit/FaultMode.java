package dev.consistencykit.testkit;

/** What the {@link FaultInjector} does to the write it is told to fault. */
public enum FaultMode {
    /** The process dies just before the write is sent: the write never reaches the server. */
    CRASH_BEFORE,
    /** The write is applied on the server, then the process dies before it sees the acknowledgement. */
    CRASH_AFTER,
    /**
     * The connection fails while sending: the write is not applied, and the caller gets a transient, retryable
     * error that does not say whether it was applied.
     */
    TRANSIENT_BEFORE,
    /**
     * The write is applied, then the connection fails before the reply: the caller gets a transient, retryable
     * error and must not take it as a failure.
     */
    TRANSIENT_AFTER,
    /**
     * The caller stops just before sending (a zombie: a long GC pause, a stopped VM) until released, then sends
     * the write as if nothing had happened.
     */
    PAUSE,
    /**
     * The write is applied, then the caller stops before it sees the reply (until released), then gets a transient,
     * retryable error: whatever runs meanwhile (a recoverer taking the operation over) happens between a write that
     * landed and the caller's retry of it.
     */
    PAUSE_AFTER,
    /**
     * The server refuses the write because a concurrent writer held what it needed: nothing is applied, and the caller
     * gets the server's own answer for it (MongoDB's {@code WriteConflict}, code 112, as a write error, a bulk write
     * error or a command error as the method gets them; a real engine answers a deadlock the same ways), which is
     * transient. Unlike {@link #TRANSIENT_BEFORE} it comes as a server's reply, not a network failure.
     */
    CONFLICT;

    /** Whether the caller stops in this mode until released (or for a random time in chaos runs). */
    public boolean isPause() {
        return this == PAUSE || this == PAUSE_AFTER;
    }

    /** Whether the process dies in this mode. */
    public boolean isCrash() {
        return this == CRASH_BEFORE || this == CRASH_AFTER;
    }
}
