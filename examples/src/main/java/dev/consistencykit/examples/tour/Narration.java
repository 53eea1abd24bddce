package dev.consistencykit.examples.tour;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * Where an example tells what it does: the steps it takes, the writes the pattern sent (see {@link WriteLog}), what a
 * reader sees, and anything that is wrong. Thread-safe.
 */
public final class Narration {

    private final PrintWriter out;
    private final List<String> lines = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();

    private Narration(PrintWriter out) {
        this.out = out;
    }

    /** A narration printed to {@code out} (and kept). */
    public static Narration to(PrintWriter out) {
        return new Narration(out);
    }

    /** A narration only kept, for tests. */
    public static Narration silent() {
        return new Narration(null);
    }

    /** A heading. */
    public void section(String title) {
        line("");
        line("== " + title);
    }

    /** What the example does next. */
    public void step(String text) {
        line("-> " + text);
    }

    /** One write the pattern sent to the server. */
    public void wrote(String summary) {
        line("     wrote " + summary);
    }

    /** What a reader of the affected documents sees now. */
    public void reader(String text) {
        line("   a reader sees: " + text);
    }

    /** An explanation. */
    public void note(String text) {
        line("   " + text);
    }

    /** Records (and prints) something that should not have happened; the tour then fails. */
    public void problem(String text) {
        synchronized (this) {
            problems.add(text);
        }
        line("!! " + text);
    }

    /** Checks {@code condition}; a false one is a {@link #problem}. */
    public void check(boolean condition, String what) {
        if (!condition) {
            problem("expected " + what);
        }
    }

    /** Every line so far. */
    public synchronized List<String> lines() {
        return List.copyOf(lines);
    }

    /** Every problem so far. */
    public synchronized List<String> problems() {
        return List.copyOf(problems);
    }

    private synchronized void line(String text) {
        lines.add(text);
        if (out != null) {
            out.println(text);
            out.flush();
        }
    }
}
