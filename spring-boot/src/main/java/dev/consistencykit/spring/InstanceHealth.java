package dev.consistencykit.spring;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.Maintenance;
import dev.consistencykit.core.StrategyStatus;

/**
 * One instance's health. <b>Down</b> only when the instance cannot do its work: the server cannot be asked, the
 * server contract's quick checks fail (a unique index its safety rests on is gone, the driver is below the floor: its
 * writes are refused until repaired), or its recovery has failed {@code recoveryFailuresDownAt} times in a row. Dead
 * jobs and operations interrupted longer than {@code interruptedAfter} are work for an operator, not a reason to
 * restart or unroute the application: they stay <b>up</b>, listed under {@code attention} in the details, unless a
 * threshold property ({@code deadJobsDownAt}, {@code interruptedDownAt}) says otherwise.
 *
 * <p>The details say how many operations are in flight, the oldest one's age, and the oldest interrupted and dead
 * ones (never a credential: ids, states, ages and the pattern's own description).
 */
final class InstanceHealth implements HealthIndicator {

    /** The most interrupted (and dead) operations the details list. */
    static final int LISTED = 5;

    private final ConsistencyStrategy<?> instance;
    private final ConsistencyKitProperties.Health settings;
    private final Supplier<Maintenance> maintenance;

    InstanceHealth(ConsistencyStrategy<?> instance, ConsistencyKitProperties.Health settings,
                   Supplier<Maintenance> maintenance) {
        this.instance = instance;
        this.settings = settings;
        this.maintenance = maintenance;
    }

    @Override
    public Health health() {
        try {
            StrategyStatus status = instance.status();
            List<InterruptedOperation> listed = instance.interrupted(settings.getInterruptedAfter(), LISTED);
            List<String> setup = instance.setupProblems();
            List<String> interrupted = new ArrayList<>();
            List<String> deadListed = new ArrayList<>();
            for (InterruptedOperation op : listed) {
                (op.state().equals("dead") ? deadListed : interrupted).add(op.id() + " " + op.state() + " "
                        + op.age() + ": " + op.detail());
            }
            long dead = status.count("dead");
            List<String> down = new ArrayList<>();
            if (!setup.isEmpty()) {
                down.add("its setup is unsafe (see setup)");
            }
            recoveryFailure().ifPresent(down::add);
            if (settings.getDeadJobsDownAt() > 0 && dead >= settings.getDeadJobsDownAt()) {
                down.add(dead + " dead jobs, at or above consistency-kit.health.dead-jobs-down-at");
            }
            if (settings.getInterruptedDownAt() > 0 && interrupted.size() >= settings.getInterruptedDownAt()) {
                down.add(interrupted.size() + " operations interrupted, at or above"
                        + " consistency-kit.health.interrupted-down-at");
            }
            List<String> attention = new ArrayList<>();
            if (dead > 0) {
                attention.add(dead + " dead job" + (dead == 1 ? "" : "s") + " waiting for an operator (replay or"
                        + " discard)");
            }
            if (!interrupted.isEmpty()) {
                attention.add((interrupted.size() == LISTED ? LISTED + " or more" : interrupted.size())
                        + " operations interrupted longer than " + settings.getInterruptedAfter()
                        + " (is recovery running?)");
            }
            Health.Builder health = down.isEmpty() ? Health.up() : Health.down().withDetail("down", down);
            health.withDetail("instance", instance.name())
                    .withDetail("inFlight", status.inFlight())
                    .withDetail("counts", status.countsByState());
            status.oldestInFlightAge().ifPresent(age -> health.withDetail("oldestInFlight", age.toString()));
            if (!attention.isEmpty()) {
                health.withDetail("attention", attention);
            }
            if (!interrupted.isEmpty()) {
                health.withDetail("interruptedLongerThan", settings.getInterruptedAfter().toString())
                        .withDetail("interrupted", interrupted);
            }
            if (dead > 0) {
                health.withDetail("deadJobs", dead).withDetail("dead", deadListed);
            }
            if (!setup.isEmpty()) {
                health.withDetail("setup", setup);
            }
            return health.build();
        } catch (ConsistencyException e) {
            return Health.down().withDetail("instance", instance.name())
                    .withDetail("down", List.of("the server cannot be asked"))
                    .withDetail("error", e.getClass().getSimpleName() + ": " + e.getMessage()).build();
        }
    }

    /** Why recovery counts as failing: its step failed {@code recoveryFailuresDownAt} times in a row. */
    private java.util.Optional<String> recoveryFailure() {
        Maintenance runner = maintenance.get();
        if (runner == null || settings.getRecoveryFailuresDownAt() <= 0) {
            return java.util.Optional.empty();
        }
        String step = instance.name() + " recover";
        return runner.health().stream().filter(h -> h.name().equals(step)
                        && h.consecutiveFailures() >= settings.getRecoveryFailuresDownAt())
                .findFirst().map(h -> "recovery failed " + h.consecutiveFailures() + " times in a row"
                        + h.lastError().map(e -> ": " + e).orElse(""));
    }
}
