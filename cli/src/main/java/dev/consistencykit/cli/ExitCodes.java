package dev.consistencykit.cli;

/** The CLI's exit codes, listed in {@code --help} (ConsistencyKitCli's exitCodeList) and in the README. */
final class ExitCodes {

    /** The command ran and found nothing wrong. */
    static final int OK = 0;
    /** The command ran and found a problem: a failed check, an invariant violated, a pattern's violation. */
    static final int PROBLEMS_FOUND = 1;
    /**
     * The command line is wrong: an unknown command or option, a bad value, a missing argument, a database that
     * does not exist on the server ({@code inspect}, {@code recover}: most likely misspelled).
     */
    static final int USAGE = 2;
    /** The MongoDB server could not be reached within {@code --server-timeout}, or refused the credentials. */
    static final int SERVER_UNREACHABLE = 3;
    /** The command failed: the server refused an operation, a file could not be written, or an unexpected error. */
    static final int FAILED = 4;
    /** The command was interrupted (SIGINT, Ctrl-C, or SIGTERM) and stopped after printing what it had done. */
    static final int INTERRUPTED = 130;

    private ExitCodes() {
    }
}
