package dev.consistencykit.core;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import com.mongodb.client.MongoDatabase;

/**
 * What every pattern's builder shares: the database, the instance name, the retry policy and the time sources. Each
 * entry type's {@code Builder} extends it, so these settings are spelled and checked the same way everywhere.
 * Setters check their argument ({@code NullPointerException} for null, {@code IllegalArgumentException} for a bad
 * value). Not thread-safe.
 *
 * @param <B> the concrete builder, which the setters return
 */
public abstract class StrategyBuilder<B extends StrategyBuilder<B>> {

    /** The database the instance works on, as the application gave it. */
    protected final MongoDatabase database;

    /** The instance name, in every log line, metric and exception. */
    protected String name;
    /** Retry of transient errors. */
    protected RetryPolicy retryPolicy;
    /** The local clock server time is estimated from. */
    protected Clock clock = Clock.systemUTC();
    /** The bound of one public call. */
    protected Duration operationTimeout;
    private ServerClock serverClock;

    /**
     * @param database    the application's database
     * @param defaultName the pattern's default instance name
     */
    protected StrategyBuilder(MongoDatabase database, String defaultName) {
        // first, before anything loads a class that needs the driver's newer types: an older driver fails here with
        // one line naming its version, not with a NoClassDefFoundError
        DriverFloor.require(defaultName);
        this.database = Objects.requireNonNull(database, "database");
        this.name = Objects.requireNonNull(defaultName, "defaultName");
        this.retryPolicy = RetryPolicy.DEFAULT;
        this.operationTimeout = Calls.DEFAULT_OPERATION_TIMEOUT;
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
        this.name = value;
        return self();
    }

    /** Retry of transient errors. Default {@link RetryPolicy#DEFAULT}. */
    public B retryPolicy(RetryPolicy value) {
        this.retryPolicy = Objects.requireNonNull(value, "retryPolicy");
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
        this.operationTimeout = positive("operationTimeout", value);
        return self();
    }

    /**
     * The settings every configuration shares (name, retry policy, clock), from {@code config}: the start of each
     * pattern builder's {@code from(config)}.
     */
    protected B fromShared(StrategyConfig config) {
        Objects.requireNonNull(config, "config");
        return name(config.name()).retryPolicy(config.retryPolicy()).clock(config.clock());
    }

    /** The local clock server time is estimated from. Default: the system clock. */
    public B clock(Clock value) {
        this.clock = Objects.requireNonNull(value, "clock");
        return self();
    }

    /** A server time source to use as it is (tests use an unsynchronized, skewed one). Default: measured. */
    public B serverClock(ServerClock value) {
        this.serverClock = Objects.requireNonNull(value, "serverClock");
        return self();
    }

    /**
     * The database, refused if its write concern is unacknowledged, with the {@link #operationTimeout} on every
     * operation.
     *
     * @throws UnsafeConfigurationException if the write concern is {@code w:0}
     */
    protected MongoDatabase acknowledgedDatabase() {
        return WriteConcerns.acknowledged(name, database).withTimeout(operationTimeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The call boundary of the instance: its deadline, error typing and interruption policy. */
    protected Calls calls() {
        return new Calls(name, retryPolicy, operationTimeout);
    }

    /** The server time source set, or one measured against {@code db} from {@link #clock}. */
    protected ServerClock serverClockFor(MongoDatabase db) {
        return serverClock != null ? serverClock : ServerClock.of(db, clock);
    }

    /**
     * Checks a duration setting that must be strictly positive.
     *
     * @return {@code value}
     * @throws IllegalArgumentException if it is zero or negative
     */
    protected static Duration positive(String setting, Duration value) {
        return Checks.positive(setting, value);
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }
}
