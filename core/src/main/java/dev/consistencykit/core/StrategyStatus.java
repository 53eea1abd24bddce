package dev.consistencykit.core;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A point-in-time view of one strategy's operations, read from the database.
 *
 * @param instanceName        the strategy instance
 * @param countsByState       how many operations are in each of the pattern's states (terminal ones included)
 * @param inFlight            how many operations are not yet terminal
 * @param oldestInFlightAge   age, by server time, of the oldest operation not yet terminal
 */
public record StrategyStatus(String instanceName, Map<String, Long> countsByState, long inFlight,
                             Optional<Duration> oldestInFlightAge) {

    /** Validates and copies the components. */
    public StrategyStatus {
        Objects.requireNonNull(instanceName, "instanceName");
        countsByState = Map.copyOf(countsByState);
        Objects.requireNonNull(oldestInFlightAge, "oldestInFlightAge");
        if (inFlight < 0) {
            throw new IllegalArgumentException("inFlight must be >= 0");
        }
    }

    /**
     * The count for one state, zero when absent. Every pattern names its states in lower case (its state enum's
     * {@code stored()}); the name is looked up in any case, so {@code count("DONE")} and {@code count("done")} agree.
     */
    public long count(String state) {
        Long exact = countsByState.get(state);
        return exact != null ? exact : countsByState.getOrDefault(state.toLowerCase(Locale.ROOT), 0L);
    }

    /** All operations of every state. */
    public long total() {
        return countsByState.values().stream().mapToLong(Long::longValue).sum();
    }
}
