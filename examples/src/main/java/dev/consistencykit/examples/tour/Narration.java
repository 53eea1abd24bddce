package dev.consistencykit.examples.tour;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

import picocli.CommandLine.Help.Ansi;

/**
 * Where an example tells what it does: the steps it takes, the writes the pattern sent (see {@link WriteLog}), what a
 * reader sees, and anything that is wrong. How much it prints is its {@link Detail}; colour only when asked (a
 * terminal without {@code NO_COLOR}). Thread-safe.
 */
public final class Narration {

    /** How much a narration prints. */
    public enum Detail {
        /** Only each example's outcome, and anything wrong. */
        QUIET,
        /** The story: steps, one compact line per write, what a reader sees. */
        STORY,
        /** The story with every write as the command the driver sent. */
        WIRE
    }

    /** The width every line is kept to: a story line is cut, a wire command wrapped. */
    static final int WIDTH = 116;

    private final PrintWriter out;
    private final Detail detail;
    private final Ansi ansi;
    private final List<String> lines = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();

    private Narration(PrintWriter out, Detail detail, boolean colour) {
        this.out = out;
        this.detail = detail;
        this.ansi = colour ? Ansi.ON : Ansi.OFF;
    }

    /** The story printed to {@code out} (and kept), without colour. */
    public static Narration to(PrintWriter out) {
        return new Narration(out, Detail.STORY, false);
    }

    /** A narration printed to {@code out} (and kept) at {@code detail}, in colour if {@code colour}. */
    public static Narration to(PrintWriter out, Detail detail, boolean colour) {
        return new Narration(out, detail, colour);
    }

    /** A narration only kept, every detail, for tests. */
    public static Narration silent() {
        return new Narration(null, Detail.WIRE, false);
    }

    /** A heading. */
    public void section(String title) {
        if (detail != Detail.QUIET) {
            line("");
            line(ansi.string("@|bold " + escape(title) + "|@"));
        }
    }

    /** What the example does next. */
    public void step(String text) {
        if (detail != Detail.QUIET) {
            wrapped("-> ", 3, text);
        }
    }

    /**
     * One write the pattern sent: in the story, {@code compact} on one line (operation, collection, the fields that
     * matter); with {@link Detail#WIRE}, {@code wire}, the whole command, wrapped.
     */
    public void wrote(String compact, String wire) {
        if (detail == Detail.STORY) {
            String text = "     " + compact;
            line(ansi.string("@|faint " + escape(text.length() > WIDTH ? text.substring(0, WIDTH - 1) + "…" : text)
                    + "|@"));
        } else if (detail == Detail.WIRE) {
            wrapped("     wrote ", 13, wire);
        }
    }

    /** What a reader of the affected documents sees now. */
    public void reader(String text) {
        if (detail != Detail.QUIET) {
            wrapped("   a reader sees: ", 5, text);
        }
    }

    /** An explanation. */
    public void note(String text) {
        if (detail != Detail.QUIET) {
            wrapped("   ", 5, text);
        }
    }

    /**
     * The process was killed on purpose: with {@link Detail#WIRE}, the injected crash; in the story the step already
     * said where, the list of writes stops there, and what a reader sees next shows it.
     */
    public void crashed(String what) {
        if (detail == Detail.WIRE) {
            note("the process is gone: " + what);
        }
    }

    /** How an example ended, in every detail: what {@code --quiet} prints. */
    public void outcome(String pattern, String text, boolean good) {
        String mark = good ? "@|green ok|@" : "@|red,bold FAILED|@";
        line(ansi.string(mark + " " + escape(pattern + ": " + text)));
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
        line(ansi.string("@|red !! " + escape(text) + "|@"));
    }

    /** Checks {@code condition}; a false one is a {@link #problem}. */
    public void check(boolean condition, String what) {
        if (!condition) {
            problem("expected " + what);
        }
    }

    /** Every line printed so far. */
    public synchronized List<String> lines() {
        return List.copyOf(lines);
    }

    /** Every problem so far. */
    public synchronized List<String> problems() {
        return List.copyOf(problems);
    }

    /** Text shown as it is inside picocli's markup. */
    private static String escape(String text) {
        return text.replace("@|", "@ |").replace("|@", "| @");
    }

    private synchronized void line(String text) {
        lines.add(text);
        if (out != null) {
            out.println(text);
            out.flush();
        }
    }
}
