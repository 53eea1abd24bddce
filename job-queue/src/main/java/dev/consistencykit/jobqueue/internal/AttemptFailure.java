package dev.consistencykit.jobqueue.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * Why an attempt of a job failed, read once from what was thrown: the text a job keeps and results carry, the top
 * frames its history keeps, the throwable the listener gets and the one the log prints.
 *
 * <p>A handler's exception is the application's code: its {@code getMessage()}, {@code toString()} or
 * {@code getStackTrace()} may throw. What they throw is described in the text instead, and the log then prints a
 * stand-in carrying that text and the frames that could be read, so that such an exception still fails the attempt
 * (and is still logged) rather than escaping the worker with the job left running until its lease ends.
 *
 * @param text     the error text, at most {@link #MAX_TEXT_CHARS} characters
 * @param frames   the top frames and causes, at most {@link #MAX_FRAMES} lines of {@link #MAX_FRAME_CHARS} characters
 * @param thrown   what was thrown, {@code null} when nothing was (no handler registered)
 * @param loggable what the log prints as the throwable: {@code thrown}, or its stand-in if it could not be read;
 *                 {@code null} when nothing was thrown
 */
record AttemptFailure(String text, List<String> frames, Throwable thrown, Throwable loggable) {

    /** The most characters of an error's text a job keeps: a handler's message can be as long as it likes. */
    static final int MAX_TEXT_CHARS = 4_000;
    /** The most lines of frames an attempt keeps in the job's history. */
    static final int MAX_FRAMES = 12;
    /** The most characters of one line of frames. */
    static final int MAX_FRAME_CHARS = 300;
    /** The frames kept of the exception thrown; each cause keeps {@link #CAUSE_FRAMES}. */
    private static final int TOP_FRAMES = 8;
    private static final int CAUSE_FRAMES = 2;
    /** Causes followed at most (a cycle of causes ends there too). */
    private static final int MAX_CAUSES = 4;

    AttemptFailure {
        frames = List.copyOf(frames);
    }

    /** A failure with no throwable: {@code text} alone. */
    static AttemptFailure of(String text) {
        return new AttemptFailure(bounded(text, MAX_TEXT_CHARS), List.of(), null, null);
    }

    /** {@code prefix} (may be empty) and the description of {@code e}, with its frames. */
    static AttemptFailure of(String prefix, Throwable e) {
        boolean[] unreadable = {false};
        String text = bounded(prefix + describe(e, unreadable), MAX_TEXT_CHARS);
        List<String> frames = new ArrayList<>();
        StackTraceElement[] top = stack(e, unreadable);
        add(frames, top, TOP_FRAMES);
        Throwable cause = cause(e, unreadable);
        for (int i = 0; i < MAX_CAUSES && cause != null && cause != e && frames.size() < MAX_FRAMES; i++) {
            frames.add(bounded("caused by " + describe(cause, unreadable), MAX_FRAME_CHARS));
            add(frames, stack(cause, unreadable), CAUSE_FRAMES);
            cause = cause(cause, unreadable);
        }
        Throwable loggable = e;
        if (unreadable[0]) {
            loggable = new UnreadableFailure(text);
            loggable.setStackTrace(top);
        }
        return new AttemptFailure(text, frames.subList(0, Math.min(frames.size(), MAX_FRAMES)), e, loggable);
    }

    /**
     * {@code e}'s class and message, as {@code Class: message}; a message that cannot be read is described as such
     * and noted in {@code unreadable}.
     */
    private static String describe(Throwable e, boolean[] unreadable) {
        String name = e.getClass().getSimpleName().isEmpty() ? e.getClass().getName() : e.getClass().getSimpleName();
        String message;
        try {
            message = e.getMessage();
        } catch (RuntimeException thrownByGetMessage) {
            unreadable[0] = true;
            return name + " (its message could not be read: getMessage() threw "
                    + thrownByGetMessage.getClass().getSimpleName() + ")";
        }
        return message == null || message.isBlank() ? name : name + ": " + message;
    }

    private static StackTraceElement[] stack(Throwable e, boolean[] unreadable) {
        try {
            StackTraceElement[] frames = e.getStackTrace();
            return frames == null ? new StackTraceElement[0] : frames;
        } catch (RuntimeException thrownByGetStackTrace) {
            unreadable[0] = true;
            return new StackTraceElement[0];
        }
    }

    private static Throwable cause(Throwable e, boolean[] unreadable) {
        try {
            return e.getCause();
        } catch (RuntimeException thrownByGetCause) {
            unreadable[0] = true;
            return null;
        }
    }

    private static void add(List<String> lines, StackTraceElement[] frames, int most) {
        for (int i = 0; i < frames.length && i < most && lines.size() < MAX_FRAMES; i++) {
            if (frames[i] != null) {
                lines.add(bounded("at " + frames[i], MAX_FRAME_CHARS));
            }
        }
        if (frames.length > most && lines.size() < MAX_FRAMES) {
            lines.add("... " + (frames.length - most) + " more");
        }
    }

    private static String bounded(String text, int most) {
        return text.length() <= most ? text : text.substring(0, most) + "… (" + (text.length() - most)
                + " characters more)";
    }

    /** The log's stand-in for an exception whose message or frames could not be read: its description, its frames. */
    static final class UnreadableFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        UnreadableFailure(String description) {
            super(description, null, false, true);
        }
    }
}
