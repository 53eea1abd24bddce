package dev.consistencykit.core;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.spi.Calls;
import dev.consistencykit.core.spi.Checks;
import dev.consistencykit.core.spi.DriverFloor;
import dev.consistencykit.core.spi.WriteConcerns;

/**
 * What every pattern's builder shares: the database, the configuration it writes into, and the setters of the
 * settings every configuration has (name, retry policy, clock, operation timeout). A pattern's setter writes one
 * field of {@link #config}; {@code build()} takes {@link #builtConfig()}, a checked copy. Setters check their
 * argument ({@code NullPointerException} for null, {@code IllegalArgumentException} for a bad value). Not
 * thread-safe.
 *
 * @param <B> the concrete builder, which the setters return
 * @param <C> the pattern's configuration
 */
public abstract class StrategyBuilder<B extends StrategyBuilder<B, C>, C extends StrategyConfig> {

    /** The database the instance works on, as the application gave it. */
    protected final MongoDatabase database;
    /** The configuration the setters write into; never handed out itself. */
    protected C config;
    private ServerClock serverClock;
    private final String pattern;
    private CallObserver observer = CallObserver.NONE;

    /**
     * @param database    the application's database
     * @param defaultName the pattern's default instance name, for the driver check's message
     * @param defaults    makes the pattern's configuration with every default
     */
    protected StrategyBuilder(MongoDatabase database, String defaultName, Supplier<C> defaults) {
        // first, before anything loads a class that needs the driver's newer types (a configuration's defaults do):
        // an older driver fails here with one line naming its version, not with a NoClassDefFoundError
        DriverFloor.require(defaultName);
        this.pattern = defaultName;
        this.database = Objects.requireNonNull(database, "database");
        this.config = defaults.get();
    }

    /**
     * Every setting of {@code other} (everything a configuration holds; handlers, listeners and other parts that are
     * not settings stay as they are).
     */
    public B from(C other) {
        this.config = copyOf(Objects.requireNonNull(other, "config"));
        return self();
    }

    /**
     * The instance name, in log lines, metrics and exceptions. Default: the pattern's name as the CLI spells it
     * ({@code two-phase}, {@code job-queue}, {@code sync-flag}, {@code log-reconciliation}, {@code versioning}).
     */
    public B name(String value) {
        Objects.requireNonNull(value, "name");
        if (value.isBlank()) {
            throw new IllegalArgumentException("name must not be blank");
        }
        config.name = value;
        return self();
    }

    /** Retry of transient errors. Default {@link RetryPolicy#DEFAULT}. */
    public B retryPolicy(RetryPolicy value) {
        config.retryPolicy = Objects.requireNonNull(value, "retryPolicy");
        return self();
    }

    /**
     * The bound of one public call of the instance: every driver operation it sends carries the driver's client-side
     * operation timeout ({@code timeoutMS}), and no retry starts that the bound cannot hold. A call that hits it ends
     * with {@link ServerUnavailableException} (a read) or {@link OutcomeUnknownException} (a write that may have been
     * applied). Default {@link Calls#DEFAULT_OPERATION_TIMEOUT} (30 s).
     *
     * @throws IllegalArgumentException if it is zero or negative
     */
    public B operationTimeout(Duration value) {
        config.operationTimeout = Checks.positive("operationTimeout", value);
        return self();
    }

    /** The local clock server time is estimated from. Default: the system clock. */
    public B clock(Clock value) {
        config.clock = Objects.requireNonNull(value, "clock");
        return self();
    }

    /** A server time source to use as it is (tests use an unsynchronized, skewed one). Default: measured. */
    public B serverClock(ServerClock value) {
        this.serverClock = Objects.requireNonNull(value, "serverClock");
        return self();
    }

    /**
     * What sees each public call of the instance begin and end (tracing: {@code consistency-kit-micrometer}'s
     * {@code ConsistencyKitObservations}). Default {@link CallObserver#NONE}.
     */
    public B observer(CallObserver value) {
        this.observer = Objects.requireNonNull(value, "observer");
        return self();
    }

    /** The observer set by {@link #observer(CallObserver)}. */
    public CallObserver observer() {
        return observer;
    }

    /**
     * The configuration to build with: a copy of what the setters wrote, its combination checked.
     *
     * @throws IllegalStateException for settings that contradict each other
     */
    protected C builtConfig() {
        C built = copyOf(config);
        built.checkCombination();
        return built;
    }

    /**
     * The database, refused if its write concern is unacknowledged, with the operation timeout set on every
     * operation.
     *
     * @throws UnsafeConfigurationException if the write concern is {@code w:0}
     */
    protected MongoDatabase acknowledgedDatabase() {
        return WriteConcerns.acknowledged(config.name, database)
                .withTimeout(config.operationTimeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The call boundary of an instance with {@code built}: its deadline, error typing and interruption policy. */
    protected Calls calls(C built) {
        return new Calls(built.name, built.retryPolicy, built.operationTimeout, pattern, observer);
    }

    /** The server time source set, or one measured against {@code db} from the configuration's clock. */
    protected ServerClock serverClockFor(MongoDatabase db, C built) {
        return serverClock != null ? serverClock : ServerClock.of(db, built.clock);
    }

    @SuppressWarnings("unchecked")   // a copy is of the class of what it copies
    private C copyOf(C original) {
        return (C) original.copy();
    }

    @SuppressWarnings("unchecked")
    protected final B self() {
        return (B) this;
    }
}
