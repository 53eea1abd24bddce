package dev.consistencykit.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Predicate;

import org.bson.BsonValue;

import com.mongodb.client.MongoDatabase;
import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.event.CommandSucceededEvent;

import dev.consistencykit.core.ConsistencyException;

/**
 * Runs another actor of a pattern at every moment of an operation: the operation is paused at each driver call it
 * makes — reads as well as writes, once before the call is sent and once after its reply arrived but before the call
 * returns — and while it is paused each actor of the table (a recoverer, a second owner with the same id, a worker, a
 * pruner, a reader…) runs to completion; then the operation resumes. Invariants are checked on data read back, and on
 * what every reader returned (an actor reports its own problems).
 *
 * <p>The pause sits on the driver's command events, in the operation's thread only, so the code under test declares
 * nothing and every other actor runs freely. Deterministic: latches, not sleeps. A violation names its schedule
 * ({@code call 3 (find transactions) after, actor recoverer}), which replays it exactly.
 *
 * <pre>{@code
 * InterleavingExplorer.Report report = InterleavingExplorer.builder(target)
 *         .workload(new Transfers())                                         // paused at each call, in turn
 *         .actor("recoverer", db -> { newStrategy(db).recover(Duration.ZERO); return List.of(); })
 *         .actor("reader", db -> problemsInWhatAReaderSees(db))              // a reader reports what it saw
 *         .build().explore();                                                // calls x {before, after} x actors
 * }</pre>
 *
 * <p>Each schedule gets its own database, dropped afterwards. Not thread-safe: one exploration at a time.
 */
public final class InterleavingExplorer {

    /** The longest the operation or an actor may take before the schedule is reported as hung. */
    public static final Duration TIMEOUT = Duration.ofSeconds(60);

    /** Where in a driver call the operation is paused. */
    public enum Point {
        /** Before the command is sent. */
        BEFORE,
        /** After its reply arrived, before the call returns to the code under test. */
        AFTER
    }

    /** One schedule: the operation paused at call {@code call} (1-based) at {@code point}, while {@code actor} runs. */
    public record Schedule(int call, String command, Point point, String actor) {
        @Override
        public String toString() {
            return "call " + call + " (" + command + ") " + point.name().toLowerCase(java.util.Locale.ROOT)
                    + ", actor " + actor;
        }
    }

    /**
     * What an exploration found.
     *
     * @param calls      the driver calls the operation made when run alone, as {@code command collection}
     * @param schedules  schedules run
     * @param violations each problem, prefixed by its schedule
     */
    public record Report(String name, List<String> calls, int schedules, List<String> violations) {
        @Override
        public String toString() {
            return name + ": " + calls.size() + " calls, " + schedules + " schedules, " + violations.size()
                    + " violations" + (violations.isEmpty() ? "" : "\n  - " + String.join("\n  - ", violations));
        }
    }

    private final MongoTarget target;
    private final String name;
    private final Workload workload;
    private final Map<String, Function<MongoDatabase, List<String>>> actors;
    private final Predicate<ConsistencyException> answers;

    private InterleavingExplorer(Builder b) {
        this.target = b.target;
        this.name = b.name;
        this.workload = Objects.requireNonNull(b.workload, "workload");
        this.actors = Map.copyOf(b.actors);
        this.answers = b.answers;
        if (actors.isEmpty()) {
            throw new IllegalStateException("an exploration needs at least one actor");
        }
    }

    /** A builder on {@code target}, whose command events the explorer listens to. */
    public static Builder builder(MongoTarget target) {
        return new Builder(target);
    }

    /** The databases of the exploration in progress, emptied and reused between schedules; null outside one. */
    private volatile ScratchDatabases scratch;

    /** Runs every schedule: every call × both points × every actor. */
    public Report explore() {
        try (ScratchDatabases pool = new ScratchDatabases(target.client(), "il-" + name)) {
            scratch = pool;
            return exploreIn();
        } finally {
            scratch = null;
        }
    }

    private Report exploreIn() {
        List<String> calls = countCalls();
        List<String> violations = new ArrayList<>();
        int schedules = 0;
        List<String> names = new ArrayList<>(actors.keySet());
        names.sort(null);
        for (int call = 1; call <= calls.size(); call++) {
            for (Point point : Point.values()) {
                for (String actor : names) {
                    Schedule schedule = new Schedule(call, calls.get(call - 1), point, actor);
                    schedules++;
                    for (String problem : run(schedule)) {
                        violations.add(schedule + ": " + problem);
                    }
                }
            }
        }
        return new Report(name, calls, schedules, violations);
    }

    private MongoDatabase fresh(String hint) {
        return Sharding.of(target.client()).applyPlan(target.client().getDatabase(
                MongoTarget.freshDatabaseName(hint)));
    }

    /** The operation alone, counting its calls. */
    private List<String> countCalls() {
        MongoDatabase db = fresh("il-" + name);
        try {
            workload.seed(db);
            List<String> calls = new ArrayList<>();
            Thread self = Thread.currentThread();
            CommandListener counter = new CommandListener() {
                @Override
                public void commandStarted(CommandStartedEvent event) {
                    if (Thread.currentThread() == self && db.getName().equals(event.getDatabaseName())) {
                        calls.add(describe(event));
                    }
                }
            };
            target.commandListeners().add(counter);
            try {
                workload.operate(db, new java.util.Random(0));
            } finally {
                target.commandListeners().remove(counter);
            }
            return calls;
        } finally {
            MongoTarget.drop(db);
        }
    }

    private static String describe(CommandStartedEvent event) {
        BsonValue collection = event.getCommand().get(event.getCommandName());
        return event.getCommandName() + (collection != null && collection.isString()
                ? " " + collection.asString().getValue() : "");
    }

    /** Pauses the operation's thread at one call and point. */
    private static final class Pause implements CommandListener {
        private final String database;
        private final int call;
        private final Point point;
        private final CountDownLatch paused = new CountDownLatch(1);
        private final CountDownLatch release = new CountDownLatch(1);
        private volatile Thread thread;
        private int seen;
        private int startedOfTarget = -1;

        Pause(String database, int call, Point point) {
            this.database = database;
            this.call = call;
            this.point = point;
        }

        private boolean ours(String db) {
            return Thread.currentThread() == thread && database.equals(db);
        }

        @Override
        public void commandStarted(CommandStartedEvent event) {
            if (!ours(event.getDatabaseName())) {
                return;
            }
            seen++;
            if (seen == call) {
                startedOfTarget = event.getRequestId();
                if (point == Point.BEFORE) {
                    hold();
                }
            }
        }

        @Override
        public void commandSucceeded(CommandSucceededEvent event) {
            after(event.getDatabaseName(), event.getRequestId());
        }

        @Override
        public void commandFailed(CommandFailedEvent event) {
            after(event.getDatabaseName(), event.getRequestId());
        }

        private void after(String db, int requestId) {
            if (point == Point.AFTER && ours(db) && requestId == startedOfTarget) {
                hold();
            }
        }

        private void hold() {
            paused.countDown();
            try {
                release.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private List<String> run(Schedule schedule) {
        ScratchDatabases pool = scratch;
        MongoDatabase db = pool != null ? pool.take() : fresh("il-" + name);
        CompletableFuture<?>[] started = new CompletableFuture<?>[1];
        List<String> problems = new ArrayList<>();
        Pause pause = new Pause(db.getName(), schedule.call(), schedule.point());
        target.commandListeners().add(pause);
        try {
            workload.seed(db);
            CompletableFuture<Void> op = CompletableFuture.runAsync(() -> {
                pause.thread = Thread.currentThread();
                workload.operate(db, new java.util.Random(0));
            });
            started[0] = op;
            boolean reached = awaitPausedOrDone(pause, op);
            if (reached) {
                try {
                    List<String> seen = actors.get(schedule.actor()).apply(db);
                    seen.forEach(p -> problems.add("actor " + schedule.actor() + " saw: " + p));
                } catch (ConsistencyException typed) {
                    if (!answers.test(typed)) {
                        problems.add("actor " + schedule.actor() + " failed with " + typed);
                    }
                } catch (RuntimeException raw) {
                    problems.add("actor " + schedule.actor() + " failed with " + raw);
                } finally {
                    pause.release.countDown();
                }
            }
            outcome(op, problems);
            target.commandListeners().remove(pause);
            workload.recover(db);
            problems.addAll(workload.invariants(db));
        } catch (RuntimeException e) {
            problems.add("schedule failed: " + e);
        } finally {
            pause.release.countDown();
            target.commandListeners().remove(pause);
            // an operation still running would write into the next schedule's data: its database is dropped
            if (pool != null && (started[0] == null || started[0].isDone())) {
                pool.give(db);
            } else {
                MongoTarget.drop(db);
            }
        }
        return problems;
    }

    /** True when the operation paused; false when it ended first (its calls differ this time). */
    private static boolean awaitPausedOrDone(Pause pause, CompletableFuture<Void> op) {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            try {
                if (pause.paused.await(5, TimeUnit.MILLISECONDS)) {
                    return true;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            if (op.isDone()) {
                return pause.paused.getCount() == 0;
            }
        }
        return false;
    }

    private void outcome(CompletableFuture<Void> op, List<String> problems) {
        try {
            op.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Error error) {
                throw error;
            }
            if (!(cause instanceof ConsistencyException typed)) {
                problems.add("the operation failed with an untyped " + cause);
            } else if (!answers.test(typed)) {
                problems.add("the operation failed with " + typed);
            }
        } catch (TimeoutException e) {
            problems.add("the operation hung for " + TIMEOUT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            problems.add("interrupted");
        }
    }

    /** Builds an {@link InterleavingExplorer}. */
    public static final class Builder {
        private final MongoTarget target;
        private String name = "operation";
        private Workload workload;
        private final Map<String, Function<MongoDatabase, List<String>>> actors = new LinkedHashMap<>();
        private Predicate<ConsistencyException> answers = e -> true;

        private Builder(MongoTarget target) {
            this.target = Objects.requireNonNull(target, "target");
        }

        /** A name for reports and database names. */
        public Builder name(String value) {
            this.name = Objects.requireNonNull(value, "name");
            return this;
        }

        /**
         * The workload's seed, one operation (its random seeded with 0), its recovery as the finish and its
         * invariants; add the actors with {@link #actor}.
         */
        public Builder workload(Workload value) {
            Objects.requireNonNull(value, "workload");
            this.workload = value;
            return this;
        }

        /** Another actor, run to completion at every pause; returns the problems it saw in what it read. */
        public Builder actor(String actorName, Function<MongoDatabase, List<String>> actor) {
            actors.put(Objects.requireNonNull(actorName, "actorName"), Objects.requireNonNull(actor, "actor"));
            return this;
        }

        /**
         * Which typed exceptions of the operation and the actors are answers (a refusal the caller is told, such as
         * a lease lost); any other is a violation. By default every {@link ConsistencyException} is an answer; a
         * table whose operation must always complete narrows it (to none, or to the refusals it expects), so that an
         * exception reporting an impossible state, or a false one, is found.
         */
        public Builder answers(Predicate<ConsistencyException> value) {
            this.answers = Objects.requireNonNull(value, "answers");
            return this;
        }

        /** The explorer. */
        public InterleavingExplorer build() {
            return new InterleavingExplorer(this);
        }
    }
}
