package dev.consistencykit.cli;

/** A command could not do its work for a reason it explains in one line (exit code {@link ExitCodes#FAILED}). */
final class CommandFailedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    CommandFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
