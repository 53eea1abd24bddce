package dev.consistencykit.core;

import java.time.Duration;
import java.util.Objects;

import dev.consistencykit.core.spi.Checks;

/**
 * One periodic step a pattern needs (a recovery pass, a prune, a relay): idempotent, safe from every process at once,
 * and what {@link Maintenance} runs on a schedule.
 *
 * @param name   the step, as health reports name it ({@code payments recover})
 * @param every  how often it runs, before jitter
 * @param action the step; a runtime exception is a failed run (retried sooner), never the end of the schedule
 */
public record MaintenanceStep(String name, Duration every, Runnable action) {

    /**
     * @throws NullPointerException     for a null component
     * @throws IllegalArgumentException for a blank name or a period that is not positive
     */
    public MaintenanceStep {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(every, "every");
        Objects.requireNonNull(action, "action");
        if (name.isBlank()) {
            throw new IllegalArgumentException("name must not be blank");
        }
        Checks.positive("every", every);
    }

    /** A step named {@code name} run every {@code every}. */
    public static MaintenanceStep of(String name, Duration every, Runnable action) {
        return new MaintenanceStep(name, every, action);
    }
}
