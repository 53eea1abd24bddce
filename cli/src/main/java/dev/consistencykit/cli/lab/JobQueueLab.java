package dev.consistencykit.cli.lab;

import static com.mongodb.client.model.Filters.eq;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

import org.bson.Document;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.spi.UpdateOutcome;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.jobqueue.JobState;
import dev.consistencykit.jobqueue.RecurringJob;
import dev.consistencykit.jobqueue.Schedule;
import dev.consistencykit.testkit.ChaosRunner;
import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.InterleavingExplorer;
import dev.consistencykit.testkit.MongoTarget;

/** Chaos and benchmark of the job queue: "A and B become friends" and counter jobs. */
public final class JobQueueLab implements PatternLab {

    private static final String USERS = "users";
    private static final String COUNTERS = "counters";
    /** The ids of the jobs whose effect a document received, pushed with the effect: the lab's own record. */
    private static final String WITNESS = "effectOf";

    @Override
    public String pattern() {
        return "job-queue";
    }

    static JobQueue queue(MongoDatabase db) {
        return JobQueue.builder(db).retryPolicy(FAST_RETRY).maxAttempts(50)
                .retryBackoff(Duration.ofMillis(1), Duration.ofMillis(5))
                .handler("befriend", ctx -> {
                    Document p = ctx.payload();
                    for (String[] side : new String[][] {{"a", "b"}, {"b", "a"}}) {
                        if (ctx.applyOnce(USERS, p.get(side[0]), Updates.combine(Updates.push("friends",
                                p.get(side[1])), Updates.push(WITNESS, ctx.id().value()))) == UpdateOutcome.MISSING) {
                            throw new IllegalStateException("no user " + p.get(side[0]));
                        }
                    }
                })
                .handler("count", ctx -> ctx.applyOnce(COUNTERS, ctx.payload().get("counter"),
                        Updates.combine(Updates.inc("n", 1L), Updates.push(WITNESS, ctx.id().value()))))
                .handler("hit", ctx -> ctx.applyOnce(COUNTERS, ctx.payload().get("counter"), Updates.inc("n", 1L)))
                .handler("noop", ctx -> { })
                .handler("step", ctx -> ctx.applyOnce(LOGS, ctx.payload().get("log"), Updates.push("seen",
                        ctx.id().value())))
                .handler("tick", ctx -> ctx.applyOnce(LOGS, TICKS, Updates.push("seen", ctx.id().value())))
                .build();
    }

    /** The logs keyed jobs and a schedule's occurrences write to: their order, and each effect once. */
    private static final String LOGS = "logs";
    private static final String TICKS = "ticks";
    private static final String TICK = "tick";
    /** The soak's schedule: every second, every missed occurrence run. */
    static final Schedule EVERY_SECOND = Schedule.cron("* * * * * *").missedRuns(Schedule.MissedRuns.EACH);

    /**
     * The logs of keyed jobs, and a schedule of every second whose first occurrence is noted: what
     * {@link #enqueueKeyedPair} and {@link #keyedInvariants} work on.
     */
    static void seedKeyed(MongoDatabase db) {
        db.getCollection(LOGS).insertMany(List.of(new Document("_id", "a").append("seen", List.of()),
                new Document("_id", "b").append("seen", List.of()), new Document("_id", TICKS)
                        .append("seen", List.of())));
        java.time.Instant first = queue(db).schedule(TICK, EVERY_SECOND, JobRequest.of(TICK, null)).nextRun()
                .orElseThrow();
        db.getCollection(LOGS).updateOne(eq("_id", TICKS), Updates.set("first", java.util.Date.from(first)));
    }

    /**
     * Two jobs, one after the other, on an ordering key or on a concurrency key of 1 (log {@code a} or {@code b}): the
     * second must run after the first.
     */
    static void enqueueKeyedPair(JobQueue queue, java.util.Random random) {
        String pair = Long.toHexString(random.nextLong());
        String log = random.nextBoolean() ? "a" : "b";
        boolean ordering = random.nextBoolean();
        for (int n = 1; n <= 2; n++) {
            JobRequest step = JobRequest.of("step", new Document("log", log)).withId(OperationId.of(pair + "-" + n));
            queue.enqueue(ordering ? step.withOrderingKey(log) : step.withConcurrencyKey("limit-" + log, 1));
        }
    }

    /**
     * Every keyed job's effect once, the second of each pair after the first, no line left; every occurrence of the
     * schedule from its first to the last fired run once, and no other.
     */
    static List<String> keyedInvariants(MongoDatabase db) {
        List<String> problems = new ArrayList<>();
        Map<Object, Integer> at = new HashMap<>();
        for (String log : List.of("a", "b")) {
            List<Object> seen = db.getCollection(LOGS).find(eq("_id", log)).first().getList("seen", Object.class);
            for (int i = 0; i < seen.size(); i++) {
                if (at.put(seen.get(i), i) != null) {
                    problems.add("log " + log + " holds " + seen.get(i) + " twice");
                }
            }
        }
        for (Document job : db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("type", "step"))) {
            String id = String.valueOf(job.get("_id"));
            if (!at.containsKey(id)) {
                problems.add("keyed job " + id + " left no effect");
            } else if (id.endsWith("-2")) {
                Integer first = at.get(id.substring(0, id.length() - 2) + "-1");
                if (first == null || first > at.get(id)) {
                    problems.add("keyed job " + id + " ran before the job enqueued before it with its key");
                }
            }
        }
        for (Document line : db.getCollection(JobQueueConfig.DEFAULT_KEYS_COLLECTION).find()) {
            problems.add("a line is left: " + line.toJson());
        }
        Document ticks = db.getCollection(LOGS).find(eq("_id", TICKS)).first();
        Document schedule = db.getCollection(JobQueueConfig.DEFAULT_SCHEDULES_COLLECTION).find(eq("_id", TICK))
                .first();
        java.util.Set<Object> fired = new java.util.HashSet<>();
        if (schedule != null && schedule.get("lastRun") instanceof java.util.Date last) {
            for (java.time.Instant t = ticks.getDate("first").toInstant(); !t.isAfter(last.toInstant());
                 t = EVERY_SECOND.nextAfter(t).orElseThrow()) {
                fired.add(RecurringJob.occurrenceId(TICK, t).value());
            }
        }
        List<Object> ran = ticks.getList("seen", Object.class);
        if (ran.size() != new java.util.HashSet<>(ran).size() || !new java.util.HashSet<>(ran).equals(fired)) {
            problems.add("the schedule fired " + fired.size() + " occurrences up to its last run, which ran "
                    + ran.size() + " times (" + (ran.size() - new java.util.HashSet<>(ran).size()) + " twice)");
        }
        return problems;
    }

    /** How many keyed jobs and occurrences ran: what a soak reports beside its operations. */
    static Map<String, Long> keyedCounts(MongoDatabase db) {
        Map<String, Long> out = new java.util.LinkedHashMap<>();
        out.put("keyed jobs", db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments(eq("type", "step")));
        out.put("occurrences", db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments(eq("type", TICK)));
        return out;
    }

    static void seed(MongoDatabase db) {
        List<Document> users = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            users.add(new Document("_id", "u" + i).append("friends", List.of()));
        }
        db.getCollection(USERS).insertMany(users);
        List<Document> counters = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            counters.add(new Document("_id", "c" + i).append("n", 0L));
        }
        db.getCollection(COUNTERS).insertMany(counters);
    }

    /** Every job terminal; each user's friends and each counter exactly the effects of the jobs they record. */
    public static List<String> invariants(MongoDatabase db) {
        List<String> problems = new ArrayList<>();
        Map<Object, Document> jobs = new HashMap<>();
        for (Document job : db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find()) {
            jobs.put(job.get("_id"), job);
            if (!JobState.fromStored(job.getString("state")).isTerminal()) {
                problems.add("job " + job.get("_id") + " not terminal: " + job.getString("state"));
            }
        }
        for (Document user : db.getCollection(USERS).find()) {
            List<String> expected = new ArrayList<>();
            List<Object> applied = user.getList(WITNESS, Object.class, List.of());
            for (Object id : applied) {
                Document p = jobs.get(id).get("payload", Document.class);
                expected.add(user.get("_id").equals(p.get("a")) ? p.getString("b") : p.getString("a"));
            }
            List<String> friends = new ArrayList<>(user.getList("friends", String.class, List.of()));
            Collections.sort(friends);
            Collections.sort(expected);
            if (!friends.equals(expected) || applied.size() != applied.stream().distinct().count()) {
                problems.add(user.get("_id") + " has friends " + friends + ", its applied jobs say " + expected);
            }
        }
        for (Document counter : db.getCollection(COUNTERS).find()) {
            List<Object> applied = counter.getList(WITNESS, Object.class, List.of());
            if (counter.getLong("n") != applied.size() || applied.size() != applied.stream().distinct().count()) {
                problems.add("counter " + counter.get("_id") + " is " + counter.getLong("n") + ", applied " + applied);
            }
        }
        for (String collection : List.of(USERS, COUNTERS)) {
            for (Document d : db.getCollection(collection).find()) {
                List<Object> marks = new ArrayList<>(d.getList("appliedJobs", Object.class, List.of()));
                for (Object r : d.getList("reservedJobs", Object.class, List.of())) {
                    marks.add(((Document) r).get("o"));
                }
                for (Object id : marks) {
                    Document job = jobs.get(id);
                    if (job == null || "done".equals(job.getString("state"))) {
                        problems.add(collection + "/" + d.get("_id") + " still carries a mark of done job " + id);
                    }
                }
            }
        }
        for (Document job : jobs.values()) {
            if ("done".equals(job.getString("state")) && "count".equals(job.getString("type"))) {
                Object counter = job.get("payload", Document.class).get("counter");
                Document c = db.getCollection(COUNTERS).find(eq("_id", counter)).first();
                if (!c.getList(WITNESS, Object.class, List.of()).contains(job.get("_id"))) {
                    problems.add("done job " + job.get("_id") + " left no effect");
                }
            }
        }
        return problems;
    }

    @Override
    public ChaosReport chaos(MongoTarget target, int seeds, Consumer<String> progress) {
        MongoClient client = target.client();
        List<String> details = new ArrayList<>();
        CrashPointExplorer.ExplorationReport life = CrashPointExplorer.builder(client)
                .name("job-life")
                .workload(workload().operation(db -> queue(db).apply(JobRequest.of("befriend",
                        new Document("a", "u0").append("b", "u1")).withId(OperationId.of("job-1")))))
                .recoveryFaults(true)
                .build().explore();
        life.violations().forEach(v -> details.add("job life: " + v));
        progress.accept("explored a job's life: " + life.writeSites() + " write sites, " + life.scenarios()
                + " scenarios, " + life.violations().size() + " violations");
        CrashPointExplorer.ExplorationReport outbox = CrashPointExplorer.builder(client)
                .name("outbox")
                .workload(workload().operation(db -> {
                    JobQueue q = queue(db);
                    q.enqueueWith(db.getCollection(USERS), "u0", null, Updates.set("status", "friendly"),
                            JobRequest.of("befriend", new Document("a", "u0").append("b", "u2"))
                                    .withId(OperationId.of("job-2")));
                    q.processNext();
                }).recoveredBy(JobQueueLab::relayAndRecover).alsoChecking(db -> {
                    Document u0 = db.getCollection(USERS).find(eq("_id", "u0")).first();
                    boolean business = "friendly".equals(u0.getString("status"));
                    boolean queued = db.getCollection(JobQueueConfig.DEFAULT_COLLECTION)
                            .find(eq("_id", "job-2")).first() != null;
                    return business == queued ? List.of()
                            : List.of("business change " + business + " but job queued " + queued);
                }))
                .build().explore();
        outbox.violations().forEach(v -> details.add("business write: " + v));
        progress.accept("explored enqueue with a business write: " + outbox.scenarios() + " scenarios");
        ChaosRunner runner = ChaosRunner.builder(client)
                .name("jobs")
                .workers(8).operationsPerWorker(4).faultRate(0.08).maxPause(Duration.ofMillis(15)).recoverers(2)
                .workload(workload())
                .build();
        int interleavings = PatternLab.explore(List.of(
                interleaving(target, "job", db -> queue(db).apply(befriend("j1"))),
                interleaving(target, "enqueue-with", db -> {
                    queue(db).enqueueWith(db.getCollection(USERS), "u0", null, Updates.inc("charged", 1),
                            befriend("j1"));
                    queue(db).processNext();
                })), details, progress);
        ChaosRunner.Summary summary = PatternLab.runSeeds(runner, seeds, progress);
        summary.failures().forEach(r -> details.add("chaos " + r));
        return new ChaosReport(pattern(), life.writeSites(), life.scenarios() + outbox.scenarios(), interleavings,
                seeds,
                summary.operations(), summary.crashes(), summary.faults(), details.size(),
                details.subList(0, Math.min(details.size(), 20)));
    }

    /**
     * The job queue as every exploration of this lab runs it: users and counters seeded; one operation a random job
     * (a count or a befriending) enqueued, then one job run; recovery requeues and runs what was left.
     */
    private static LabWorkload workload() {
        return new LabWorkload(JobQueueLab::seed, (db, random) -> {
            JobQueue q = queue(db);
            String id = "j-" + Long.toHexString(random.nextLong());
            if (random.nextBoolean()) {
                q.enqueue(JobRequest.of("count", new Document("counter", "c" + random.nextInt(4)))
                        .withId(OperationId.of(id)));
            } else {
                int a = random.nextInt(4);
                int b = (a + 1 + random.nextInt(3)) % 4;
                q.enqueue(JobRequest.of("befriend", new Document("a", "u" + a).append("b", "u" + b))
                        .withId(OperationId.of(id)));
            }
            q.processNext();
        }, db -> queue(db).recover(Duration.ZERO), JobQueueLab::invariants);
    }

    /** What a restarted process's maintenance does: relay the outboxes, then recover. */
    private static void relayAndRecover(MongoDatabase db) {
        JobQueue q = queue(db);
        q.relayOutbox(db.getCollection(USERS));
        q.recover(Duration.ZERO);
    }

    private static JobRequest befriend(String id) {
        return JobRequest.of("befriend", new Document("a", "u0").append("b", "u1")).withId(OperationId.of(id));
    }

    /** {@code operation} paused at each of its driver calls while a recoverer, a second owner, a worker or a relayer runs. */
    private static InterleavingExplorer interleaving(MongoTarget target, String name,
                                                     java.util.function.Consumer<MongoDatabase> operation) {
        return InterleavingExplorer.builder(target)
                .name(name)
                .workload(workload().operation(operation).recoveredBy(JobQueueLab::relayAndRecover)
                        .alsoChecking(db -> {
                            Document u0 = db.getCollection(USERS).find(eq("_id", "u0")).first();
                            return u0.getInteger("charged", 1) == 1 ? List.of()
                                    : List.of("u0 charged " + u0.get("charged") + " times");
                        }))
                .actor("recoverer", db -> {
                    queue(db).recover(Duration.ZERO);
                    return List.of();
                })
                .actor("second owner", db -> {
                    queue(db).apply(befriend("j1"));
                    return List.of();
                })
                .actor("worker", db -> {
                    queue(db).processNext();
                    return List.of();
                })
                .actor("relayer", db -> {
                    queue(db).relayOutbox(db.getCollection(USERS));
                    return List.of();
                })
                .build();
    }

    /** The jobs an ordering key holds before the {@code backlog} variant measures an enqueue behind them. */
    static final int BACKLOG = 2_000;

    @Override
    public List<String> variants() {
        return List.of("apply", "keyed", "backlog");
    }

    @Override
    public BenchReport bench(MongoTarget target, Bench.Settings settings, Consumer<String> progress) {
        // the jobs stay unsharded (the claim needs them whole); the no-op handler touches nothing else
        MongoDatabase db = Bench.database(target, "benchjobs", settings, Map.of());
        try {
            JobQueue queue = queue(db);
            queue.ensureIndexes();
            AtomicLong ids = new AtomicLong();
            String variant = settings.variant().isEmpty() ? "apply" : settings.variant();
            if (variant.equals("backlog")) {
                // a key whose head waits for a worker that never comes, and BACKLOG jobs behind it
                progress.accept("filling an ordering key with " + BACKLOG + " jobs");
                for (int i = 0; i < BACKLOG; i++) {
                    long n = ids.incrementAndGet();
                    queue.enqueue(JobRequest.of("noop", new Document("n", n)).withId(OperationId.of(n))
                            .withOrderingKey("hot"));
                }
            }
            IntConsumer job = switch (variant) {
                // an enqueue on an ordering key: behind one waiting job (keyed), or behind BACKLOG of them
                case "keyed", "backlog" -> t -> {
                    long n = ids.incrementAndGet();
                    queue.enqueue(JobRequest.of("noop", new Document("n", n)).withId(OperationId.of(n))
                            .withOrderingKey(variant.equals("keyed") ? "k" + n / 2 : "hot"));
                };
                default -> t -> {
                    long n = ids.incrementAndGet();
                    queue.apply(JobRequest.of("noop", new Document("n", n)).withId(OperationId.of(n)));
                };
            };
            // the raw baseline updates jobs of the queue itself: enqueue a few thousand first
            Bench.timed(settings.threads(), Duration.ofSeconds(1), job);
            List<Long> rawIds = new ArrayList<>();
            for (long i = 1; i <= Math.min(ids.get(), 10_000); i++) {
                rawIds.add(i);
            }
            IntConsumer raw = Bench.rawUpdate(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION), rawIds);
            Bench.Measured m = Bench.measure(target, db.getName(), settings, job, raw, progress, "jobs");
            return new BenchReport(pattern(), settings.threads(), m.pattern().operations(), m.roundTripsPerOp(),
                    m.writesPerOp(), m.pattern().perSecond(), m.raw().perSecond(),
                    new Document("operation", switch (variant) {
                        case "keyed" -> "enqueue() on an ordering key whose line holds one job";
                        case "backlog" -> "enqueue() on an ordering key whose line holds " + BACKLOG
                                + " jobs and more (each one measured joins it)";
                        default -> "apply(): enqueue, claim that job, no-op handler, complete";
                    })
                            .append("rawBaseline", Bench.RAW_BASELINE)
                            .append("note", "on the embedded server the claim reads the jobs in state TODO through"
                                    + " the testkit's equality index and sorts them; MongoDB walks the claim-order"
                                    + " index"));
        } finally {
            Bench.release(db, settings);
        }
    }

    @Override
    public boolean hasHotBench() {
        return true;
    }

    @Override
    public BenchReport benchHot(MongoTarget target, int operations, Consumer<String> progress) {
        MongoDatabase db = target.client().getDatabase(MongoTarget.freshDatabaseName("hotjobs"));
        try {
            seed(db);
            JobQueue queue = queue(db);
            queue.ensureIndexes();
            JobQueue.ensureEffectIndexes(db.getCollection(COUNTERS));
            Bench.Hot hot = Bench.hot(target, db, db.getCollection(COUNTERS), "c0", operations,
                    i -> queue.apply(JobRequest.of("hit", new Document("counter", "c0"))
                            .withId(OperationId.of("h" + i))), progress);
            return new BenchReport(pattern(), 1, hot.operations(), hot.roundTripsPerOp(), hot.writesPerOp(),
                    hot.opsPerSec(), hot.rawOpsPerSec(), hot.json()
                            .append("operation", "apply(hit job): every job increments one counter through applyOnce")
                            .append("rawBaseline", "updateOne $inc of the hot document, one thread"));
        } finally {
            db.drop();
        }
    }
}
