package dev.consistencykit.examples.tour;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
            // whole, or cut between two changes saying how many it leaves out; wrapped at a space if still too wide
            wrapped("     ", 7, fitted(compact, WIDTH - 5), true);
            for (Map.Entry<String, String> field : BOOKKEEPING.entrySet()) {
                if (compact.contains(field.getKey()) && explained.add(field.getKey())) {
                    wrapped("       (", 8, field.getKey() + ": " + field.getValue() + ")", true);
                }
            }
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
    private void wrapped(String first, int indent, String text) {
        wrapped(first, indent, text, false);
    }

    /** {@code text} after {@code first}, wrapped at spaces to {@link #WIDTH}, continued after {@code indent} spaces. */
    private synchronized void wrapped(String first, int indent, String text, boolean faint) {
        String prefix = first;
        String rest = text;
        while (prefix.length() + rest.length() > WIDTH) {
            int cut = WIDTH - prefix.length();
            int space = rest.lastIndexOf(' ', cut);
            if (space <= 0) {
                space = rest.indexOf(' ', cut);   // a word longer than the line: kept whole
                if (space < 0) {
                    break;
                }
            }
            styled(prefix + rest.substring(0, space), faint);
            rest = rest.substring(space).stripLeading();
            prefix = " ".repeat(indent);
        }
        styled(prefix + rest, faint);
    }

    /**
     * {@code compact} in {@code width} characters: whole when it fits, else its leading changes, cut between two of
     * them (never inside a word or a value), with how many it leaves out: {@code --wire} shows them all.
     */
    static String fitted(String compact, int width) {
        if (compact.length() <= width) {
            return compact;
        }
        List<Integer> cuts = new ArrayList<>();
        for (int i = compact.indexOf(", "); i >= 0; i = compact.indexOf(", ", i + 1)) {
            cuts.add(i);
        }
        for (int i = compact.indexOf("; and "); i >= 0; i = compact.indexOf("; and ", i + 1)) {
            cuts.add(i);
        }
        cuts.removeIf(at -> depth(compact.substring(0, at)) != 0);   // never inside a value's braces
        cuts.sort(null);
        for (int k = cuts.size() - 1; k >= 0; k--) {
            int left = cuts.size() - k;
            String tail = " … and " + left + " more change" + (left == 1 ? "" : "s");
            if (cuts.get(k) + tail.length() <= width) {
                return compact.substring(0, cuts.get(k)) + tail;
            }
        }
        return compact;   // no boundary fits: whole, rather than cut inside a word
    }

    private static int depth(String text) {
        int depth = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            depth += c == '{' || c == '[' ? 1 : c == '}' || c == ']' ? -1 : 0;
        }
        return depth;
    }

    private void styled(String text, boolean faint) {
        line(faint ? ansi.string("@|faint " + escape(text) + "|@") : text);
    }

    /**
     * The bookkeeping fields the patterns write on documents, each said once in plain words the first time a write
     * shows it.
     */
    private static final Map<String, String> BOOKKEEPING = new LinkedHashMap<>();

    static {
        BOOKKEEPING.put("reservedTransactions", "a transfer's claim on the account for this attempt, before it changes"
                + " anything; removed when it applies");
        BOOKKEEPING.put("pendingTransactions", "the transfers applied to this account and not yet finished; a reader"
                + " (and recovery) knows the balance includes them");
        BOOKKEEPING.put("reservedJobs", "a job's claim on the document for this attempt, before its effect");
        BOOKKEEPING.put("appliedJobs", "the jobs whose effect this document already has: a retry skips it");
        BOOKKEEPING.put("syncing", "the flag on the master while its copies are being written: the sweeper finds it");
        BOOKKEEPING.put("SyncVersion", "which rename a copy holds: an older rename never overwrites a newer one");
        BOOKKEEPING.put("leaseExpiresAt", "until when the owner may work undisturbed; after it, another process may"
                + " take over, fenced by the token");
        BOOKKEEPING.put("fencingToken", "raised by each new owner: a paused owner's late writes no longer match");
        BOOKKEEPING.put("cacheBal", "the account balance this log entry leads to, written before the cached"
                + " balance so the committer can finish it");
    }

    private final Set<String> explained = new HashSet<>();

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
