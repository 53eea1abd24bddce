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
 */
public record RecoveryReport(String instanceName, int examined, int rolledForward, int rolledBack, int skipped,
                             Duration elapsed) {

    /** Validates the components. */
    public RecoveryReport {
        Objects.requireNonNull(instanceName, "instanceName");
        Objects.requireNonNull(elapsed, "elapsed");
        if (examined < 0 || rolledForward < 0 || rolledBack < 0 || skipped < 0) {
            throw new IllegalArgumentException("counts must be >= 0");
        }
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
