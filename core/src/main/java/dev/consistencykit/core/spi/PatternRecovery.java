package dev.consistencykit.core.spi;

import java.time.Duration;

import dev.consistencykit.core.RecoveryReport;

/** What a pattern's recovery does for the lifecycle every pattern shares: finish or undo what was left unfinished. */
public interface PatternRecovery {

    /** Finishes or undoes what was left unfinished longer than {@code staleAfter} (zero: everything unfinished). */
    RecoveryReport recover(Duration staleAfter);

    /** {@link #recover(Duration)} restricted to the operation {@code id} (already checked). */
    RecoveryReport recoverOne(Object id, Duration staleAfter);
}
