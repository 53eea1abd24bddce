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
        wrapped("-> ", 3, text);
    }

    /** The width every line is wrapped at; continuation lines are indented under their first line's text. */
    static final int WIDTH = 116;

    /** One write the pattern sent to the server, whole, wrapped. */
    public void wrote(String summary) {
        wrapped("     wrote ", 13, summary);
    }

    /** What a reader of the affected documents sees now. */
    public void reader(String text) {
        wrapped("   a reader sees: ", 5, text);
    }

    /** An explanation. */
    public void note(String text) {
        wrapped("   ", 5, text);
    }

    /** {@code text} after {@code first}, wrapped at {@link #WIDTH}, at a space when one is near. */
    private synchronized void wrapped(String first, int indent, String text) {
        String prefix = first;
        String rest = text;
        while (prefix.length() + rest.length() > WIDTH) {
            int cut = WIDTH - prefix.length();
            int space = rest.lastIndexOf(' ', cut);
            int at = space > cut / 2 ? space : cut;
            line(prefix + rest.substring(0, at));
            rest = rest.substring(at).stripLeading();
            prefix = " ".repeat(indent);
        }
        line(prefix + rest);
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
