package dev.consistencykit.core;

import java.time.Duration;
import java.util.Objects;

/**
 * What one {@link ConsistencyStrategy#recover(Duration)} pass did.
 *
 * @param instanceName  the strategy instance that ran it
 * @param examined      interrupted operations found stale enough to take over
 * @param rolledForward operations this pass drove to their committed end
 * @param rolledBack    operations this pass undid or canceled
 * @param skipped       operations another process was already driving (its claim won), left alone
 * @param elapsed       how long the pass took
 * @param setAside      operations this pass could not finish for a reason retrying will not change (the server
 *                      refused a participant's update, the record is unreadable): marked with the reason, logged,
 *                      listed as interrupted, and left out of later passes until an operator clears the mark
 */
public record RecoveryReport(String instanceName, int examined, int rolledForward, int rolledBack, int skipped,
                             Duration elapsed, int setAside) {

    /** Validates the components. */
    public RecoveryReport {
        Objects.requireNonNull(instanceName, "instanceName");
        Objects.requireNonNull(elapsed, "elapsed");
        if (examined < 0 || rolledForward < 0 || rolledBack < 0 || skipped < 0 || setAside < 0) {
            throw new IllegalArgumentException("counts must be >= 0");
        }
    }

    /** A pass that set nothing aside. */
    public RecoveryReport(String instanceName, int examined, int rolledForward, int rolledBack, int skipped,
                          Duration elapsed) {
        this(instanceName, examined, rolledForward, rolledBack, skipped, elapsed, 0);
    }

    /** Operations this pass finished, forward or back. */
    public int repaired() {
        return rolledForward + rolledBack;
    }

    /** Whether this pass changed nothing. */
    public boolean isEmpty() {
        return repaired() == 0;
    }
}
