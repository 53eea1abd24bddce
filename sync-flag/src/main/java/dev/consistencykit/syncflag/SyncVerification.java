package dev.consistencykit.syncflag;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * What {@link SyncFlag#verify(boolean)} found: every copy of every master compared with its master's current value.
 *
 * @param instanceName   the instance that ran it
 * @param masters        masters checked
 * @param copies         target documents holding a copy of a checked master
 * @param staleCopies    target documents holding at least one copy that differed from its master
 * @param staleMasters   masters with at least one stale copy
 * @param repairedCopies target documents rewritten by the repair (zero when not repairing)
 * @param samples        up to {@value #MAX_SAMPLES} descriptions of stale copies
 * @param elapsed        how long it took
 */
public record SyncVerification(String instanceName, long masters, long copies, long staleCopies, long staleMasters,
                               long repairedCopies, List<String> samples, Duration elapsed) {

    /** The most stale copies described in {@link #samples()}. */
    public static final int MAX_SAMPLES = 20;

    /** Copies the list. */
    public SyncVerification {
        Objects.requireNonNull(instanceName, "instanceName");
        samples = List.copyOf(samples);
        Objects.requireNonNull(elapsed, "elapsed");
    }

    /** Whether every copy equalled its master. */
    public boolean consistent() {
        return staleCopies == 0;
    }
}
