package dev.consistencykit.spring;

import java.time.Duration;
import java.util.List;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.StrategyStatus;

/**
 * One instance's health: down while an operation has stood interrupted longer than the threshold (recovery is not
 * keeping up, or not running), a job is dead (it waits for an operator's replay), the server contract's quick checks
 * fail (a unique index the instance's safety rests on is gone, the driver is below the floor: its writes are refused
 * until it is repaired), or when the server cannot be asked; up otherwise. The details say how many operations are in flight, the oldest one's age, and the oldest interrupted
 * ones (never a credential: ids, states, ages and the pattern's own description).
 */
final class InstanceHealth implements HealthIndicator {

    /** The most interrupted operations the details list. */
    static final int LISTED = 5;

    private final ConsistencyStrategy<?> instance;
    private final Duration interruptedAfter;

    InstanceHealth(ConsistencyStrategy<?> instance, Duration interruptedAfter) {
        this.instance = instance;
        this.interruptedAfter = interruptedAfter;
    }

    @Override
    public Health health() {
        try {
            StrategyStatus status = instance.status();
            List<InterruptedOperation> interrupted = instance.interrupted(interruptedAfter, LISTED);
            List<String> setup = instance.setupProblems();
            long dead = status.count("dead");
            Health.Builder health = interrupted.isEmpty() && dead == 0 && setup.isEmpty() ? Health.up()
                    : Health.down();
            health.withDetail("instance", instance.name())
                    .withDetail("inFlight", status.inFlight())
                    .withDetail("counts", status.countsByState());
            status.oldestInFlightAge().ifPresent(age -> health.withDetail("oldestInFlight", age.toString()));
            if (!interrupted.isEmpty()) {
                health.withDetail("interruptedLongerThan", interruptedAfter.toString())
                        .withDetail("interrupted", interrupted.stream().map(op -> op.id() + " " + op.state() + " "
                                + op.age() + ": " + op.detail()).toList());
            }
            if (dead > 0) {
                health.withDetail("deadJobs", dead);
            }
            if (!setup.isEmpty()) {
                health.withDetail("setup", setup);
            }
            return health.build();
        } catch (ConsistencyException e) {
            return Health.down().withDetail("instance", instance.name())
                    .withDetail("error", e.getClass().getSimpleName() + ": " + e.getMessage()).build();
        }
    }
}
