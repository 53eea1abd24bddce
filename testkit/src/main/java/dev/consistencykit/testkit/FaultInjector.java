package dev.consistencykit.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

import com.mongodb.MongoSocketReadException;
import com.mongodb.MongoSocketWriteException;
import com.mongodb.ServerAddress;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.spi.Checks;
import dev.consistencykit.core.spi.MongoErrors;
import dev.consistencykit.testkit.internal.FaultInjectingProxies;
import dev.consistencykit.testkit.internal.WriteFaults;

/**
 * Makes every write that code under test sends a numbered crash point, without that code declaring any.
 *
 * <p>{@link #wrap(MongoDatabase)} returns a {@code MongoDatabase} whose collections count every write method call
 * ({@code insertOne}, {@code insertMany}, {@code updateOne}, {@code updateMany}, {@code replaceOne},
 * {@code deleteOne}, {@code deleteMany}, {@code findOneAndUpdate}, {@code findOneAndReplace},
 * {@code findOneAndDelete}, {@code bulkWrite}) as write sites 1, 2, 3… and apply the injector's schedule to each:
 * nothing, or one of the {@link FaultMode}s. One injector models one process: once it has crashed, every further
 * call through any of its proxies (reads too) throws {@link InjectedCrash}, as a dead process sends nothing.
 *
 * <pre>{@code
 * FaultInjector injector = FaultInjector.at(3, FaultMode.CRASH_AFTER);
 * assertThatThrownBy(() -> strategy(injector.wrap(db)).transfer(transfer)).isInstanceOf(InjectedCrash.class);
 * // write #3 is on the server; recover with a fresh instance on the plain database
 * }</pre>
 *
 * <p>Thread-safe: one injector may be shared by the threads of one simulated process.
 */
public final class FaultInjector {

    /** Decides the fault, if any, for each write site. Called in write order, one call at a time. */
    @FunctionalInterface
    public interface Schedule {
        /** The fault to inject at {@code site}, or empty to let it through. */
        Optional<FaultMode> faultAt(WriteSite site);
    }

    /** A fault that was injected. */
    public record InjectedFault(WriteSite site, FaultMode mode) {
        @Override
        public String toString() {
            return mode + " at " + site;
        }
    }

    private static final Duration MAX_PAUSE = Duration.ofSeconds(60);
    private static final ServerAddress FAKE_ADDRESS = new ServerAddress("injected-fault", 27017);
    /** MongoDB's {@code WriteConflict}. */
    private static final int WRITE_CONFLICT = 112;

    private final Schedule schedule;
    private final Duration pauseFor;
    /** Whether to pause before a read: asked once per read, in order; never for an injector without one. */
    private final java.util.function.BooleanSupplier readPauses;
    private final AtomicInteger writes = new AtomicInteger();
    private final List<WriteSite> sites = new ArrayList<>();
    private final List<InjectedFault> faults = new ArrayList<>();
    private final CountDownLatch paused = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);
    private volatile InjectedFault crash;

    private FaultInjector(Schedule schedule, Duration pauseFor) {
        this(schedule, pauseFor, () -> false);
    }

    private FaultInjector(Schedule schedule, Duration pauseFor, java.util.function.BooleanSupplier readPauses) {
        this.schedule = Objects.requireNonNull(schedule, "schedule");
        this.pauseFor = pauseFor;
        this.readPauses = readPauses;
    }

    /** An injector that injects nothing and only counts write sites. */
    public static FaultInjector counting() {
        return new FaultInjector(site -> Optional.empty(), null);
    }

    /**
     * An injector that injects {@code mode} at write site {@code site} (from 1). A {@link FaultMode#PAUSE} (or
     * {@link FaultMode#PAUSE_AFTER}) blocks the writing thread until {@link #release()} (or 60 s at most).
     */
    public static FaultInjector at(int site, FaultMode mode) {
        if (site < 1) {
            throw new IllegalArgumentException("write sites are numbered from 1, was " + site);
        }
        Objects.requireNonNull(mode, "mode");
        return new FaultInjector(s -> s.number() == site ? Optional.of(mode) : Optional.empty(), null);
    }

    /**
     * An injector that injects {@code mode} at the {@code occurrence}-th write (from 1) calling {@code method} on
     * {@code collection}: a fault site named by what it is, which stays put when the code under test gains another
     * write elsewhere (an ordinal from {@link #at(int, FaultMode)} would shift).
     *
     * @param method     the collection method ({@code updateOne}, {@code findOneAndUpdate}, {@code bulkWrite}…), or
     *                   null for any
     * @param collection the collection name, or null for any
     */
    public static FaultInjector atWrite(String method, String collection, int occurrence, FaultMode mode) {
        Checks.atLeast("occurrence", occurrence, 1);
        Objects.requireNonNull(mode, "mode");
        return at(site -> (method == null || method.equals(site.method()))
                && (collection == null || collection.equals(site.collection())), occurrence, mode);
    }

    /**
     * An injector that injects {@code mode} at the {@code occurrence}-th write site (from 1) that {@code matches}
     * accepts, and nowhere else.
     */
    public static FaultInjector at(Predicate<WriteSite> matches, int occurrence, FaultMode mode) {
        Objects.requireNonNull(matches, "matches");
        Checks.atLeast("occurrence", occurrence, 1);
        Objects.requireNonNull(mode, "mode");
        AtomicInteger seen = new AtomicInteger();
        return new FaultInjector(s -> matches.test(s) && seen.incrementAndGet() == occurrence ? Optional.of(mode)
                : Optional.empty(), null);
    }

    /**
     * An injector that faults each write with probability {@code rate}, choosing among {@code modes}, from a
     * seeded generator: the same seed gives the same schedule over the same sequence of writes. A
     * {@link FaultMode#PAUSE} or {@link FaultMode#PAUSE_AFTER} lasts a random time up to {@code maxPause}, then the
     * write (or its lost reply) goes on.
     */
    public static FaultInjector random(long seed, double rate, Collection<FaultMode> modes, Duration maxPause) {
        if (!(rate >= 0.0 && rate <= 1.0)) {
            throw new IllegalArgumentException("rate must be in [0, 1], was " + rate);
        }
        List<FaultMode> choices = List.copyOf(EnumSet.copyOf(modes));
        Objects.requireNonNull(maxPause, "maxPause");
        Random random = new Random(seed);
        return new FaultInjector(site -> {
            if (random.nextDouble() >= rate) {
                return Optional.empty();
            }
            return Optional.of(choices.get(random.nextInt(choices.size())));
        }, maxPause);
    }

    /**
     * An injector that faults each write with the probability {@code rates} gives its mode (a write gets at most one
     * fault: the probabilities sum to at most 1), and pauses before each read ({@code find}, {@code aggregate}…) with
     * probability {@code readPause}, from seeded generators: the same seed gives the same schedule over the same
     * sequence of calls. A pause, of a read or a write, lasts a random time up to {@code maxPause}. What a demanding
     * user's chaos draws: processes killed at a few writes in a hundred, replies lost at a few more, and calls slowed
     * at more still, reads included, so that every actor meets the others between any two of its calls.
     *
     * <pre>{@code
     * FaultInjector process = FaultInjector.weighted(seed, Map.of(FaultMode.CRASH_BEFORE, 0.01,
     *         FaultMode.CRASH_AFTER, 0.01, FaultMode.TRANSIENT_BEFORE, 0.02, FaultMode.TRANSIENT_AFTER, 0.02,
     *         FaultMode.PAUSE, 0.05), 0.05, Duration.ofMillis(20));
     * MongoDatabase faulty = process.wrap(db);   // one process: once killed, the next gets an injector of its own
     * }</pre>
     */
    public static FaultInjector weighted(long seed, java.util.Map<FaultMode, Double> rates, double readPause,
                                         Duration maxPause) {
        Objects.requireNonNull(maxPause, "maxPause");
        List<FaultMode> modes = new ArrayList<>(new java.util.TreeMap<>(rates).keySet());
        double[] upTo = new double[modes.size()];
        double sum = 0;
        for (int i = 0; i < modes.size(); i++) {
            double rate = rates.get(modes.get(i));
            if (!(rate >= 0.0)) {
                throw new IllegalArgumentException("the rate of " + modes.get(i) + " must be >= 0, was " + rate);
            }
            sum += rate;
            upTo[i] = sum;
        }
        if (sum > 1.0 || !(readPause >= 0.0 && readPause <= 1.0)) {
            throw new IllegalArgumentException("the rates of the write faults sum to " + sum + " and the read pause's"
                    + " is " + readPause + ": each must be in [0, 1]");
        }
        Random writes = new Random(seed);
        Random reads = new Random(~seed);
        return new FaultInjector(site -> {
            double draw = writes.nextDouble();
            for (int i = 0; i < upTo.length; i++) {
                if (draw < upTo[i]) {
                    return Optional.of(modes.get(i));
                }
            }
            return Optional.empty();
        }, maxPause, () -> {
            synchronized (reads) {
                return reads.nextDouble() < readPause;
            }
        });
    }

    /** An injector driven by a custom schedule; pauses block until {@link #release()}. */
    public static FaultInjector withSchedule(Schedule schedule) {
        return new FaultInjector(schedule, null);
    }

    /** Every fault mode. */
    public static Set<FaultMode> allModes() {
        return EnumSet.allOf(FaultMode.class);
    }

    /** What the proxies ask: this injector's answers. */
    private final WriteFaults<InjectedFault> proxied = new WriteFaults<>() {
        @Override
        public void checkAlive(String method) {
            FaultInjector.this.checkAlive(method);
        }

        @Override
        public void beforeRead(String method, String collection) {
            if (readPauses.getAsBoolean()) {
                pause();
            }
        }

        @Override
        public Optional<InjectedFault> beforeWrite(String method, String collection) {
            return FaultInjector.this.beforeWrite(method, collection);
        }

        @Override
        public void applyBefore(InjectedFault fault) {
            FaultInjector.this.applyBefore(fault);
        }

        @Override
        public void applyAfter(InjectedFault fault) {
            FaultInjector.this.applyAfter(fault);
        }
    };

    /** {@code database} with every write of every collection obtained from it going through this injector. */
    public MongoDatabase wrap(MongoDatabase database) {
        return FaultInjectingProxies.database(database, proxied);
    }

    /** {@code collection} with every write going through this injector. */
    public <T> MongoCollection<T> wrap(MongoCollection<T> collection) {
        return FaultInjectingProxies.collection(collection, proxied);
    }

    /** How many writes were attempted through this injector (faulted ones included). */
    public int writes() {
        return writes.get();
    }

    /** Every write site seen, in order. */
    public synchronized List<WriteSite> sites() {
        return List.copyOf(sites);
    }

    /** Every fault injected, in order. */
    public synchronized List<InjectedFault> faults() {
        return List.copyOf(faults);
    }

    /** Whether this simulated process has crashed. */
    public boolean isDead() {
        return crash != null;
    }

    /** The crash, if the process has crashed. */
    public Optional<InjectedFault> crash() {
        return Optional.ofNullable(crash);
    }

    /**
     * Waits until a writer is paused by a {@link FaultMode#PAUSE} or {@link FaultMode#PAUSE_AFTER}; false if none
     * paused in time.
     */
    public boolean awaitPaused(Duration timeout) throws InterruptedException {
        return paused.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Lets a paused writer go on. */
    public void release() {
        released.countDown();
    }

    // ---- called by the proxies -------------------------------------------------------------------------------

    /** Throws if the process is dead. Called before every proxied call. */
    public void checkAlive(String method) {
        InjectedFault c = crash;
        if (c != null) {
            throw new InjectedCrash("process is dead (" + c + "); " + method + " was not sent");
        }
    }

    /** Registers a write and returns the fault to inject at it, if any. Called by the proxies. */
    public Optional<InjectedFault> beforeWrite(String method, String collection) {
        checkAlive(method);
        WriteSite site = new WriteSite(writes.incrementAndGet(), method, collection);
        Optional<FaultMode> mode;
        synchronized (this) {
            sites.add(site);
            mode = schedule.faultAt(site);
            mode.ifPresent(m -> faults.add(new InjectedFault(site, m)));
        }
        return mode.map(m -> new InjectedFault(site, m));
    }

    /** Applies the part of {@code fault} that happens before the write is sent. Called by the proxies. */
    public void applyBefore(InjectedFault fault) {
        switch (fault.mode()) {
            case CRASH_BEFORE -> throw die(fault);
            case TRANSIENT_BEFORE -> {
                MongoSocketWriteException e = new MongoSocketWriteException(
                        "injected: connection reset while sending (" + fault + ")", FAKE_ADDRESS,
                        new java.io.IOException("injected"));
                e.addLabel(MongoErrors.RETRYABLE_WRITE_ERROR_LABEL);
                throw e;
            }
            case PAUSE -> pause();
            case CONFLICT -> throw conflict(fault);
            default -> {
                // the rest happens after the write
            }
        }
    }

    /** Applies the part of {@code fault} that happens after the write was applied. Called by the proxies. */
    public void applyAfter(InjectedFault fault) {
        switch (fault.mode()) {
            case CRASH_AFTER -> throw die(fault);
            case TRANSIENT_AFTER -> throw lostReply(fault);
            case PAUSE_AFTER -> {
                pause();
                throw lostReply(fault);
            }
            default -> {
                // nothing after
            }
        }
    }

    private static MongoSocketReadException lostReply(InjectedFault fault) {
        MongoSocketReadException e = new MongoSocketReadException(
                "injected: connection lost before the reply (" + fault + ")", FAKE_ADDRESS);
        e.addLabel(MongoErrors.RETRYABLE_WRITE_ERROR_LABEL);
        return e;
    }

    /** The server's {@code WriteConflict} as the driver raises it for the faulted method. */
    private static com.mongodb.MongoServerException conflict(InjectedFault fault) {
        String message = "injected: WriteConflict, a concurrent writer held what this write needed (" + fault + ")";
        return switch (fault.site().method()) {
            case "bulkWrite", "insertMany" -> new com.mongodb.MongoBulkWriteException(
                    com.mongodb.bulk.BulkWriteResult.acknowledged(0, 0, 0, 0, List.of(), List.of()),
                    List.of(new com.mongodb.bulk.BulkWriteError(WRITE_CONFLICT, message, new org.bson.BsonDocument(),
                            0)), null, FAKE_ADDRESS, Set.of());
            case "findOneAndUpdate", "findOneAndReplace", "findOneAndDelete" -> new com.mongodb.MongoCommandException(
                    new org.bson.BsonDocument("ok", new org.bson.BsonDouble(0))
                            .append("code", new org.bson.BsonInt32(WRITE_CONFLICT))
                            .append("codeName", new org.bson.BsonString("WriteConflict"))
                            .append("errmsg", new org.bson.BsonString(message)), FAKE_ADDRESS);
            default -> new com.mongodb.MongoWriteException(new com.mongodb.WriteError(WRITE_CONFLICT, message,
                    new org.bson.BsonDocument()), FAKE_ADDRESS, Set.of());
        };
    }

    private InjectedCrash die(InjectedFault fault) {
        crash = fault;
        return new InjectedCrash("injected crash: " + fault);
    }

    private void pause() {
        paused.countDown();
        try {
            if (pauseFor != null) {
                long max = Math.max(1, pauseFor.toMillis());
                Thread.sleep(1 + java.util.concurrent.ThreadLocalRandom.current().nextLong(max));
            } else if (!released.await(MAX_PAUSE.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("paused writer was never released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InjectedCrash("paused writer interrupted");
        }
    }
}
