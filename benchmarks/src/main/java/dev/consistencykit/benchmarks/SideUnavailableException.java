package dev.consistencykit.benchmarks;

/** A side that cannot run on this server: the message says what failed, as measured. */
final class SideUnavailableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    SideUnavailableException(String message) {
        super(message);
    }

    SideUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
