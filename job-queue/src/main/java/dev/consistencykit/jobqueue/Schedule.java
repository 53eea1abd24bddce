package dev.consistencykit.jobqueue;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.Optional;

import com.cronutils.model.Cron;
import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;

/**
 * When a recurring job runs: on a cron expression, or a fixed delay after its previous run finished. Immutable; two
 * schedules are equal when they say the same thing, which is how {@link JobQueue#schedule} tells a repeated
 * registration (nothing written) from a change.
 *
 * <pre>{@code
 * Schedule nightly = Schedule.cron("0 3 * * *", ZoneId.of("Europe/Paris"));   // 03:00 daily in Paris (crontab's fields)
 * Schedule often = Schedule.cron("0/30 * * * * *");                          // every 30 s, UTC (seconds first)
 * Schedule hourly = Schedule.cron("0 * * * *").missedRuns(Schedule.MissedRuns.EACH);   // every missed hour caught up
 * Schedule sweep = Schedule.fixedDelay(Duration.ofMinutes(5));               // 5 minutes after the previous run ended
 * }</pre>
 */
public final class Schedule {

    /** What a cron schedule does with occurrences that came due while nothing fired them (every process down). */
    public enum MissedRuns {
        /** The missed occurrences run once, together, as soon as a process fires them; then the schedule goes on. */
        ONCE,
        /** Missed occurrences do not run: an occurrence a whole period late is dropped, the schedule goes on. */
        SKIP,
        /** Every missed occurrence runs, each its own job, oldest first (a catch-up). */
        EACH
    }

    /** The longest cron expression accepted, in characters. */
    public static final int MAX_EXPRESSION_LENGTH = 200;

    private static final CronParser UNIX = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));
    private static final CronParser SPRING = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(
            CronType.SPRING53));

    private final String expression;
    private final ZoneId zone;
    private final MissedRuns missedRuns;
    private final Duration delay;
    private final ExecutionTime times;

    private Schedule(String expression, ZoneId zone, MissedRuns missedRuns, Duration delay) {
        this.expression = expression;
        this.zone = zone;
        this.missedRuns = missedRuns;
        this.delay = delay;
        this.times = expression == null ? null : ExecutionTime.forCron(parse(expression));
    }

    /** {@link #cron(String, ZoneId)} in UTC. */
    public static Schedule cron(String expression) {
        return cron(expression, ZoneOffset.UTC);
    }

    /**
     * Occurrences at the times {@code expression} names in {@code zone}, missed ones run {@link MissedRuns#ONCE}.
     * Five fields are crontab's (minute, hour, day of month, month, day of week); six put seconds first, as Spring's
     * {@code @Scheduled} does (and accept its macros, {@code @daily}, {@code @hourly}…).
     *
     * @throws IllegalArgumentException if the expression is not one of those
     */
    public static Schedule cron(String expression, ZoneId zone) {
        Objects.requireNonNull(expression, "expression");
        Objects.requireNonNull(zone, "zone");
        return new Schedule(expression.strip(), zone, MissedRuns.ONCE, null);
    }

    /**
     * Occurrences {@code delay} apart, measured from the end of the previous one (its job done, dead or discarded), so
     * two never overlap; the first is due when the schedule is registered.
     *
     * @throws IllegalArgumentException if {@code delay} is not positive
     */
    public static Schedule fixedDelay(Duration delay) {
        Objects.requireNonNull(delay, "delay");
        if (delay.isNegative() || delay.isZero()) {
            throw new IllegalArgumentException("delay must be positive, was " + delay);
        }
        return new Schedule(null, null, null, delay);
    }

    /**
     * This cron schedule with {@code policy} for missed occurrences.
     *
     * @throws IllegalStateException on a fixed-delay schedule, which never has more than one occurrence due
     */
    public Schedule missedRuns(MissedRuns policy) {
        Objects.requireNonNull(policy, "policy");
        if (expression == null) {
            throw new IllegalStateException("a fixed-delay schedule has no missed runs: its next occurrence is due a"
                    + " delay after the previous one ended");
        }
        return new Schedule(expression, zone, policy, null);
    }

    private static Cron parse(String expression) {
        if (expression.isEmpty() || expression.length() > MAX_EXPRESSION_LENGTH) {
            throw new IllegalArgumentException("a cron expression has 1 to " + MAX_EXPRESSION_LENGTH
                    + " characters, was " + expression.length());
        }
        int fields = expression.startsWith("@") ? 6 : expression.split("\\s+").length;
        if (fields != 5 && fields != 6) {
            throw new IllegalArgumentException("a cron expression has five fields (crontab's) or six (seconds first),"
                    + " '" + expression + "' has " + fields);
        }
        try {
            Cron cron = (fields == 5 ? UNIX : SPRING).parse(expression);
            return cron.validate();
        } catch (IllegalArgumentException | DateTimeException e) {
            throw new IllegalArgumentException("'" + expression + "' is not a cron expression: " + e.getMessage(), e);
        }
    }

    /** The cron expression; empty for a fixed delay. */
    public Optional<String> expression() {
        return Optional.ofNullable(expression);
    }

    /** The zone a cron expression is read in; empty for a fixed delay. */
    public Optional<ZoneId> zone() {
        return Optional.ofNullable(zone);
    }

    /** What happens to missed occurrences; empty for a fixed delay. */
    public Optional<MissedRuns> missed() {
        return Optional.ofNullable(missedRuns);
    }

    /** The fixed delay; empty for a cron schedule. */
    public Optional<Duration> delay() {
        return Optional.ofNullable(delay);
    }

    /**
     * The first occurrence strictly after {@code after}; empty once a cron expression names no later time. A cron
     * occurrence is a whole second (cron-utils would keep the fraction of a second {@code after} has).
     */
    public Optional<Instant> nextAfter(Instant after) {
        if (times == null) {
            return Optional.of(after.plus(delay));
        }
        return times.nextExecution(after.truncatedTo(ChronoUnit.SECONDS).atZone(zone))
                .map(t -> t.toInstant().truncatedTo(ChronoUnit.SECONDS));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Schedule s && Objects.equals(expression, s.expression) && Objects.equals(zone, s.zone)
                && missedRuns == s.missedRuns && Objects.equals(delay, s.delay);
    }

    @Override
    public int hashCode() {
        return Objects.hash(expression, zone, missedRuns, delay);
    }

    /** {@code cron '0 3 * * *' Europe/Paris, missed runs ONCE}, or {@code every PT5M after the previous run}. */
    @Override
    public String toString() {
        return expression != null ? "cron '" + expression + "' " + zone + ", missed runs " + missedRuns
                : "every " + delay + " after the previous run";
    }
}
