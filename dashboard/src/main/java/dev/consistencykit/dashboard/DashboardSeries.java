package dev.consistencykit.dashboard;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

import org.bson.Document;

/**
 * The short time series the page draws while it is open: one sample per poll of the overview (at most one a second),
 * the last {@value #KEPT}. Kept in memory only: nothing is written.
 */
final class DashboardSeries {

    /** The samples kept. */
    static final int KEPT = 150;
    private static final long MIN_GAP_MILLIS = 1_000;

    private final Deque<Document> samples = new ArrayDeque<>();
    private long repaired;

    /**
     * Adds a sample, unless the last one is less than a second old (two pages open poll twice as often).
     *
     * @param recovered the recoveries the shown instances counted since they were built (in the application that
     *                  runs them: its maintenance's too)
     */
    synchronized void sample(long finishedLastMinute, long unfinished, long interrupted, long recovered) {
        long now = System.currentTimeMillis();
        Document last = samples.peekLast();
        if (last != null && now - last.getLong("t") < MIN_GAP_MILLIS) {
            return;
        }
        samples.addLast(new Document("t", now).append("finishedLastMinute", finishedLastMinute)
                .append("unfinished", unfinished).append("interrupted", interrupted)
                .append("recovered", recovered).append("repairedFromPage", repaired));
        while (samples.size() > KEPT) {
            samples.removeFirst();
        }
    }

    /** Counts operations repaired by a recovery asked from the page. */
    synchronized void repaired(int count) {
        repaired += count;
    }

    /** The samples, oldest first. */
    synchronized List<Document> samples() {
        return new ArrayList<>(samples);
    }
}
