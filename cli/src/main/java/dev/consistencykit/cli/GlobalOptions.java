package dev.consistencykit.cli;

import java.time.Duration;

/**
 * The options every command inherits from the top-level command ({@code --uri}, {@code --json},
 * {@code --server-timeout}), as a subcommand reads them: its {@code @ParentCommand} is this interface, so a command
 * depends on what it reads, not on the top-level command that lists it.
 */
interface GlobalOptions {

    /** {@code --uri}, or {@code null}. */
    String uri();

    /** {@code --json}: one JSON object as the last line of standard output. */
    boolean json();

    /** {@code --server-timeout}. */
    Duration serverTimeout();

    /** Says that the command's JSON report ends with its own exit code: no generic error line after it. */
    void reportCarriesOutcome();
}
