package dev.consistencykit.cli;

/** The server named by {@code --uri} or {@code MONGODB_URI} did not answer, or refused the credentials. */
final class ServerUnreachableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    ServerUnreachableException(String message, Throwable cause) {
        super(message, cause);
    }
}
