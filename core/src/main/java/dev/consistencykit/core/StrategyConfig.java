package dev.consistencykit.core;

import java.time.Clock;
import java.util.Objects;

/**
 * What every pattern's configuration shares, as {@link StrategyBuilder} is what every builder shares: the instance
 * name, the retry policy and the local clock. Each pattern's {@code …Config} extends it with its own settings; like
 * it, a configuration is immutable and built only by its entry type's builder.
 */
public abstract class StrategyConfig {

    private final String name;
    private final RetryPolicy retryPolicy;
    private final Clock clock;

    /**
     * @throws NullPointerException for a null setting
     */
    protected StrategyConfig(String name, RetryPolicy retryPolicy, Clock clock) {
        this.name = Objects.requireNonNull(name, "name");
        this.retryPolicy = Objects.requireNonNull(retryPolicy, "retryPolicy");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** The instance name, in log lines, metrics and exceptions. */
    public final String name() {
        return name;
    }

    /** The retry of transient errors. */
    public final RetryPolicy retryPolicy() {
        return retryPolicy;
    }

    /** The local clock server time is estimated from. */
    public final Clock clock() {
        return clock;
    }

    /** Whether {@code other} has the same shared settings: the start of each configuration's {@code equals}. */
    protected final boolean sharesSettingsWith(StrategyConfig other) {
        return name.equals(other.name) && retryPolicy.equals(other.retryPolicy) && clock.equals(other.clock);
    }

    /** The hash of the shared settings: the start of each configuration's {@code hashCode}. */
    protected final int sharedHashCode() {
        return Objects.hash(name, retryPolicy, clock);
    }

    /** {@code Type[name=…, <settings>, retryPolicy=…, clock=…]}, {@code settings} being the subclass's own. */
    protected final String describe(String settings) {
        return getClass().getSimpleName() + "[name=" + name + ", " + settings + ", retryPolicy=" + retryPolicy
                + ", clock=" + clock + "]";
    }
}
