package dev.consistencykit.core;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.spi.Checks;

/**
 * An estimate of the server's clock, used to judge how stale an operation is and when a lease expires.
 *
 * <p>Timestamps the patterns store come from the server ({@code $currentDate}); comparing them with a client's
 * own clock would make recovery take over too early or too late on a client whose clock is skewed. This class
 * measures the offset between an injectable local {@link Clock} and the server's {@code localTime} (reported by
 * the {@code isMaster} command, by MongoDB and by the embedded server alike), taking the sample with the
 * shortest round trip and halving it, and adds it to the local clock. It re-measures every
 * {@link #DEFAULT_RESYNC_INTERVAL} (5 minutes).
 *
 * <p>Safety never depends on this estimate: it only decides <em>when</em> recovery may take over. An estimate
 * off by any amount delays or hastens a takeover, and the fencing guards make an early takeover harmless.
 *
 * <p>The estimate never steps back by a measurement's jitter: one instance measures once at a time (threads that
 * need the first measurement wait for it rather than each keeping a sample of its own), and {@link #now()} holds
 * its latest answer while a new measurement puts it up to {@value #HIDDEN_STEP_BACK_MILLIS} ms earlier. So a
 * stamp taken from {@code now()} (a job due now) is never in the future for a later {@code now()} of the same
 * instance; a larger correction (the local clock stepped back) goes through at once.
 *
 * <p>Thread-safe.
 *
 * <pre>{@code
 * ServerClock clock = ServerClock.of(database);
 * Instant cutoff = clock.now().minus(Duration.ofSeconds(30));   // older than this is stale
 * }</pre>
 */
public final class ServerClock {

    /** How often the offset is measured again: 5 minutes. */
    public static final Duration DEFAULT_RESYNC_INTERVAL = Duration.ofMinutes(5);

    /** How far back a new measurement may put the estimate before {@link #now()} follows it: 1 second. */
    public static final long HIDDEN_STEP_BACK_MILLIS = 1_000;

    /** What {@link #cutoff} answers for an age of zero: after every time a server stamps. */
    public static final Instant ANY_AGE = Instant.parse("9999-12-31T23:59:59.999Z");

    private static final int SAMPLES = 3;
    private static final Logger LOG = LoggerFactory.getLogger(ServerClock.class);

    private final MongoDatabase database;
    private final Clock localClock;
    private final Duration resyncInterval;
    private final boolean synchronizedWithServer;

    private volatile Measurement measurement;
    /** The latest estimate {@link #now()} returned. */
    private final AtomicReference<Instant> latest = new AtomicReference<>(Instant.MIN);

    private record Measurement(Duration offset, Duration uncertainty, Instant measuredAtLocal) {
    }

    private ServerClock(MongoDatabase database, Clock localClock, Duration resyncInterval) {
        this(database, localClock, resyncInterval, true);
    }

    private ServerClock(MongoDatabase database, Clock localClock, Duration resyncInterval, boolean sync) {
        this.synchronizedWithServer = sync;
        this.database = sync ? Objects.requireNonNull(database, "database") : database;
        this.localClock = Objects.requireNonNull(localClock, "localClock");
        this.resyncInterval = Objects.requireNonNull(resyncInterval, "resyncInterval");
        Checks.positive("resyncInterval", resyncInterval);
    }

    /** A server clock for {@code database} measured against the system clock. */
    public static ServerClock of(MongoDatabase database) {
        return new ServerClock(database, Clock.systemUTC(), DEFAULT_RESYNC_INTERVAL);
    }

    /**
     * A server clock measured against {@code localClock}; tests inject a skewed clock to show that the estimate
     * of server time, and so recovery, is unaffected by client clock skew.
     */
    public static ServerClock of(MongoDatabase database, Clock localClock) {
        return new ServerClock(database, localClock, DEFAULT_RESYNC_INTERVAL);
    }

    /** A server clock with a custom re-measure interval. */
    public static ServerClock of(MongoDatabase database, Clock localClock, Duration resyncInterval) {
        return new ServerClock(database, localClock, resyncInterval);
    }

    /**
     * A clock that takes {@code localClock} for the server's time without measuring the offset. For tests only: it
     * models a process whose idea of server time is wrong by however much {@code localClock} is skewed, to show that
     * such a process can make recovery take over early or late but never break safety.
     */
    public static ServerClock unsynchronized(Clock localClock) {
        return new ServerClock(null, localClock, DEFAULT_RESYNC_INTERVAL, false);
    }

    /**
     * The estimated current time on the server. Measures the offset first if it is missing or old. Never earlier than
     * an answer it gave before, unless the estimate moved back by more than {@value #HIDDEN_STEP_BACK_MILLIS} ms.
     */
    public Instant now() {
        Measurement m = current();
        Instant estimate = localClock.instant().plus(m.offset());
        if (!synchronizedWithServer) {
            return estimate;   // a test's clock, taken as it is
        }
        return latest.accumulateAndGet(estimate, (before, next) -> next.isBefore(before)
                && !next.isBefore(before.minusMillis(HIDDEN_STEP_BACK_MILLIS)) ? before : next);
    }

    /**
     * The estimated server time minus {@code age}: anything last modified before it is older than {@code age}. For an
     * age of zero, a time after every stamp ({@link #ANY_AGE}): "older than nothing" is everything there is, including
     * what the server stamped a moment ago by a clock ahead of this estimate (by up to half a round trip, more on a
     * loaded machine), which the estimate itself would leave out.
     */
    public Date cutoff(Duration age) {
        Objects.requireNonNull(age, "age");
        return age.isZero() ? Date.from(ANY_AGE) : Date.from(now().minus(age));
    }


    /** The estimated age, by server time, of a server-stamped instant. Never negative. */
    public Duration ageOf(Instant serverStamp) {
        Duration age = Duration.between(serverStamp, now());
        return age.isNegative() ? Duration.ZERO : age;
    }

    /** The measured offset: server time minus local time. */
    public Duration offset() {
        return current().offset();
    }

    /** Half the round trip of the best sample: how far off the estimate may be. */
    public Duration uncertainty() {
        return current().uncertainty();
    }

    /** Measures the offset now, regardless of its age. */
    public void resync() {
        if (!synchronizedWithServer) {
            return;
        }
        synchronized (this) {
            measurement = measure();
        }
    }

    private Measurement current() {
        if (!synchronizedWithServer) {
            return new Measurement(Duration.ZERO, Duration.ZERO, localClock.instant());
        }
        Measurement m = measurement;
        if (stale(m)) {
            synchronized (this) {   // one measurement at a time: the threads that need it take the same one
                m = measurement;
                if (stale(m)) {
                    m = measure();
                    measurement = m;
                }
            }
        }
        return m;
    }

    private boolean stale(Measurement m) {
        return m == null
                || Duration.between(m.measuredAtLocal(), localClock.instant()).abs().compareTo(resyncInterval) > 0;
    }

    private Measurement measure() {
        Measurement best = null;
        for (int i = 0; i < SAMPLES; i++) {
            Instant before = localClock.instant();
            Document reply = database.runCommand(new Document("isMaster", 1));
            Instant after = localClock.instant();
            Object localTime = reply.get("localTime");
            if (!(localTime instanceof Date serverTime)) {
                throw new ConsistencyException(null, null,
                        "the server did not report localTime in isMaster; cannot measure server time");
            }
            Duration roundTrip = Duration.between(before, after);
            Instant midpoint = before.plus(roundTrip.dividedBy(2));
            Measurement sample = new Measurement(Duration.between(midpoint, serverTime.toInstant()),
                    roundTrip.dividedBy(2), after);
            if (best == null || sample.uncertainty().compareTo(best.uncertainty()) < 0) {
                best = sample;
            }
        }
        LOG.debug("server clock offset {} ms (±{} ms)", best.offset().toMillis(), best.uncertainty().toMillis());
        return best;
    }
}
