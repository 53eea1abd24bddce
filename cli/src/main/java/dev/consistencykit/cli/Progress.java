package dev.consistencykit.cli;

import java.io.PrintWriter;
import java.util.function.Consumer;

/**
 * Progress of a long-running command: on a terminal, one line rewritten in place on standard error; otherwise
 * (output redirected, or {@code --json}) nothing, so standard output stays the command's result.
 */
final class Progress implements Consumer<String> {

    private final PrintWriter err;
    private final boolean enabled;
    private final long start = System.nanoTime();
    private int lastLength;

    @SuppressWarnings("SystemConsoleNull")   // on Java 17 to 21 the console is null when output is redirected
    Progress(PrintWriter err, boolean json) {
        this.err = err;
        this.enabled = !json && System.console() != null;
    }

    @Override
    public void accept(String step) {
        if (!enabled) {
            return;
        }
        String line = String.format("[%5.1f s] %s", (System.nanoTime() - start) / 1e9, step);
        err.print("\r" + line + " ".repeat(Math.max(0, lastLength - line.length())));
        err.flush();
        lastLength = line.length();
    }

    /** Whether it draws (on a terminal, without {@code --json}). */
    boolean enabled() {
        return enabled;
    }

    /** Clears the progress line. */
    void done() {
        if (enabled && lastLength > 0) {
            err.print("\r" + " ".repeat(lastLength) + "\r");
            err.flush();
        }
    }
}
