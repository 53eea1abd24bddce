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
 * @param inFlightCopies of the stale copies, those of masters whose flag is set: a propagation is under way (or its
 *                       process died and the sweeper will finish it); the others have drifted
 * @param repairedCopies target documents rewritten by the repair (zero when not repairing)
 * @param samples        up to {@value #MAX_SAMPLES} descriptions of stale copies
 * @param elapsed        how long it took
 */
public record SyncVerification(String instanceName, long masters, long copies, long staleCopies, long staleMasters,
                               long inFlightCopies, long repairedCopies, List<String> samples, Duration elapsed) {

    /** The most stale copies described in {@link #samples()}. */
    public static final int MAX_SAMPLES = 20;

    /** Copies the list. */
    public SyncVerification {
        Objects.requireNonNull(instanceName, "instanceName");
        samples = List.copyOf(samples);
        Objects.requireNonNull(elapsed, "elapsed");
    }

    /**
     * Stale copies of masters with no flag: no propagation will bring them back, so something wrote them behind the
     * pattern's back (or a propagation was lost); what an operator repairs.
     */
    public long driftedCopies() {
        return staleCopies - inFlightCopies;
    }

    /** Whether every copy equalled its master. */
    public boolean consistent() {
        return staleCopies == 0;
    }
}
