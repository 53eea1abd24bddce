package dev.consistencykit.cli.lab;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.bson.Document;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.testkit.Accounts;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.twophase.TwoPhaseConfig;

/**
 * The kill -9 soak: worker processes doing two-phase transfers, job-queue jobs and ledger transfers against a server
 * in its own process, killed with SIGKILL at random moments and restarted; then recovery and every invariant, on data
 * read back.
 */
public final class Soak {

    /** The patterns a soak runs, one worker process each (more with {@link Settings#workersPerPattern()}). */
    public static final List<String> PATTERNS = List.of("two-phase", "job-queue", "log-reconciliation");

    private static final int ACCOUNTS = 10;
    private static final long OPENING = 100_000;
    private static final Duration WORKER_RECOVERY_AFTER = Duration.ofSeconds(2);

    /**
     * How a soak runs.
     *
     * @param duration          how long workers run and get killed
     * @param workersPerPattern worker processes per pattern
     * @param seed              the seed of the kill schedule and of the workers' choices
     * @param uri               a server to use; empty: start the embedded server in a process of its own
     * @param database          the database to soak in (it must not exist); {@code null}: a fresh name
     */
    public record Settings(Duration duration, int workersPerPattern, long seed, String uri, String database) {

        /** A soak in a database of a fresh name. */
        public Settings(Duration duration, int workersPerPattern, long seed, String uri) {
            this(duration, workersPerPattern, seed, uri, null);
        }

        /** Validates. */
        public Settings {
            Objects.requireNonNull(duration, "duration");
            if (duration.isNegative() || duration.isZero()) {
                throw new IllegalArgumentException("duration must be > 0, was " + duration);
            }
            if (workersPerPattern < 1) {
                throw new IllegalArgumentException("workersPerPattern must be >= 1, was " + workersPerPattern);
            }
        }
    }

    /**
     * What a soak did and found.
     *
     * @param seconds    how long the workers ran
     * @param kills      SIGKILLs sent to workers
     * @param operations operations that reached the database, per pattern
     * @param violations  invariants violated after recovery (empty: none)
     * @param interrupted whether an interruption stopped the soak before recovery (then nothing was checked)
     */
    public record Report(double seconds, int kills, Map<String, Long> operations, List<String> violations,
                         boolean interrupted) {

        /** The JSON object the CLI prints. */
        public Document json() {
            return new Document("seconds", Math.round(seconds * 10) / 10.0).append("kills", kills)
                    .append("interrupted", interrupted)
                    .append("workers", PATTERNS.size())
                    .append("operations", new Document(new LinkedHashMap<>(operations)))
                    .append("violations", violations.size()).append("details", violations.subList(0,
                            Math.min(20, violations.size())));
        }
    }

    private Soak() {
    }

    /**
     * Runs a soak. An interruption of the calling thread ends the kill phase early: every worker is stopped, then
     * recovery and the invariants run as at a normal end, and the report says it was interrupted. The server process
     * is ended last (also on any failure).
     */
    public static Report run(Settings settings, Consumer<String> progress) throws IOException {
        Process server = null;
        List<Process> workers = new ArrayList<>();
        try {
            String uri = settings.uri();
            if (uri == null || uri.isBlank()) {
                server = start(List.of("--json", "serve", "--port", "0", "--parent-pid",
                        Long.toString(ProcessHandle.current().pid())), "serve");
                BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(),
                        StandardCharsets.UTF_8));
                String line = out.readLine();
                if (line == null) {
                    throw new IllegalStateException("the server process printed nothing");
                }
                uri = Document.parse(line).getString("connectionString");
            }
            return soak(settings, uri, workers, progress);
        } finally {
            for (Process w : workers) {
                w.destroyForcibly();
            }
            for (Process w : workers) {
                waitFor(w);
            }
            if (server != null) {
                server.destroy();
                waitFor(server);
            }
        }
    }

    private static void waitFor(Process process) {
        boolean interrupted = Thread.interrupted();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            interrupted = true;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static Report soak(Settings settings, String uri, List<Process> workers, Consumer<String> progress)
            throws IOException {
        String database = settings.database() != null ? settings.database() : MongoTarget.freshDatabaseName("soak");
        // bounded: should the server be gone, the soak ends with an error within the interruption's grace, not after the
        // driver's 30 s server selection
        try (MongoClient client = MongoClients.create(com.mongodb.MongoClientSettings.builder()
                .applyConnectionString(new com.mongodb.ConnectionString(uri))
                .applyToClusterSettings(c -> c.serverSelectionTimeout(5, TimeUnit.SECONDS)).build())) {
            MongoDatabase db = client.getDatabase(database);
            if (settings.database() != null && db.listCollectionNames().first() != null) {
                throw new IllegalArgumentException("the soak's database " + database + " exists: a soak checks its"
                        + " invariants on data it seeded itself, so it runs in a new database only");
            }
            seed(db);
            progress.accept("soak: database " + database + " on " + MongoTarget.redact(uri) + ", "
                    + settings.workersPerPattern() + " worker process(es) for each of " + PATTERNS + ", killed and"
                    + " restarted for " + settings.duration().toSeconds() + " s (kill schedule seed " + settings.seed()
                    + ")");
            Random random = new Random(settings.seed());
            List<String> workerPatterns = new ArrayList<>();
            for (String pattern : PATTERNS) {
                for (int i = 0; i < settings.workersPerPattern(); i++) {
                    workerPatterns.add(pattern);
                }
            }
            for (String pattern : workerPatterns) {
                workers.add(worker(uri, database, pattern, random.nextLong()));
            }
            int kills = 0;
            long start = System.nanoTime();
            long deadline = start + settings.duration().toNanos();
            boolean interrupted = false;
            try {
                while (System.nanoTime() < deadline) {
                    TimeUnit.MILLISECONDS.sleep(200 + random.nextInt(1_300));
                    int victim = random.nextInt(workers.size());
                    workers.get(victim).destroyForcibly().waitFor();
                    kills++;
                    workers.set(victim, worker(uri, database, workerPatterns.get(victim), random.nextLong()));
                    progress.accept(String.format("%.0f s: %s killed with SIGKILL and restarted",
                            (System.nanoTime() - start) / 1e9, workersKilled(kills)));
                }
            } catch (InterruptedException e) {
                // the flag is clear now, so the clean-up below can still talk to the server, which the signal did not
                // reach (it runs in a session of its own): recovery and the invariants run as at a normal end
                interrupted = true;
            }
            for (Process w : workers) {
                w.destroyForcibly();
                waitFor(w);
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            boolean stoppedEarly = interrupted;
            progress.accept("workers stopped; recovering every pattern and checking its invariants");
            recover(db);
            List<String> violations = invariants(db);
            Map<String, Long> operations = operations(db);
            operations.forEach((pattern, count) -> {
                // (a pattern's count; the job queue's keyed jobs and occurrences are counted beside it)
                if (PATTERNS.contains(pattern) && count == 0 && !stoppedEarly) {   // cut short, a worker may not have begun
                    violations.add(pattern + ": no operation reached the database (see consistency-kit-soak-worker-"
                            + pattern + ".err in " + System.getProperty("java.io.tmpdir") + ")");
                }
            });
            db.drop();
            return new Report(seconds, kills, operations, violations, interrupted);
        }
    }

    /** {@code 1 worker}, {@code 3 workers}. */
    public static String workersKilled(int kills) {
        return kills + (kills == 1 ? " worker" : " workers");
    }

    private static void seed(MongoDatabase db) {
        Accounts.seed(db, TwoPhaseConfig.DEFAULT_ACCOUNTS_COLLECTION, Accounts.named(ACCOUNTS, OPENING));
        TwoPhaseCommit.on(db).ensureIndexes();
        JobQueueLab.seed(db);
        JobQueueLab.queue(db).ensureIndexes();
        JobQueueLab.seedKeyed(db);
        LedgerLab.open(db, ACCOUNTS, OPENING);
    }

    private static void recover(MongoDatabase db) {
        for (int round = 0; round < 2; round++) {
            TwoPhaseCommit.on(db).recover(Duration.ZERO);
            JobQueueLab.queue(db).recover(Duration.ZERO);
            LedgerLab.ledger(db).recover(Duration.ZERO);
        }
    }

    /** Every pattern's invariants: money conserved and applied exactly once, every job's effects once, ledgers proven. */
    static List<String> invariants(MongoDatabase db) {
        List<String> problems = new ArrayList<>();
        TwoPhaseLab.invariants(db, Accounts.named(ACCOUNTS, OPENING), true).forEach(p -> problems.add("two-phase: " + p));
        JobQueueLab.invariants(db).forEach(p -> problems.add("job-queue: " + p));
        JobQueueLab.keyedInvariants(db).forEach(p -> problems.add("job-queue: " + p));
        LedgerLab.invariants(db, Accounts.named(ACCOUNTS, OPENING)).forEach(p -> problems.add("log-reconciliation: "
                + p));
        return problems;
    }

    private static Map<String, Long> operations(MongoDatabase db) {
        Map<String, Long> ops = new LinkedHashMap<>();
        ops.put("two-phase", db.getCollection(TwoPhaseConfig.DEFAULT_TRANSACTIONS_COLLECTION).countDocuments());
        ops.put("job-queue", db.getCollection("jobs").countDocuments());
        JobQueueLab.keyedCounts(db).forEach((what, n) -> ops.put("job-queue " + what, n));
        ops.put("log-reconciliation", db.getCollection("ledger").countDocuments());
        return ops;
    }

    /** A worker process; its URI goes in its environment, never on its command line (visible to {@code ps}). */
    private static Process worker(String uri, String database, String pattern, long seed) throws IOException {
        return start(List.of("soak-worker", "--database", database, "--pattern", pattern,
                "--seed", Long.toString(seed), "--parent-pid", Long.toString(ProcessHandle.current().pid())),
                "soak-worker-" + pattern, uri);
    }

    /** The CLI in a new JVM with this one's class path. */
    private static Process start(List<String> args, String logName) throws IOException {
        return start(args, logName, null);
    }

    private static Process start(List<String> args, String logName, String uri) throws IOException {
        return processBuilder(args, logName, uri).start();
    }

    /**
     * The CLI in a new JVM: {@code uri}, which may hold a password, goes into the child's environment, never onto its
     * command line, where any user of the machine can read it ({@code ps}).
     */
    /** Linux's {@code setsid}, where there is one. */
    private static final Path SETSID = Path.of("/usr/bin/setsid");

    static ProcessBuilder processBuilder(List<String> args, String logName, String uri) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                "dev.consistencykit.cli.ConsistencyKitCli"));
        command.addAll(args);
        if (Files.isExecutable(SETSID)) {
            // a session of its own: Ctrl-C in a terminal, or `timeout`, signals the whole foreground process group;
            // the soak's server and workers are the soak's to stop (and they watch it, should it die), so the signal
            // reaches the soak alone, which then stops its workers, recovers and checks the invariants on the server
            command.add(0, SETSID.toString());
        }
        ProcessBuilder builder = new ProcessBuilder(command);
        if (uri != null) {
            builder.environment().put(MongoTarget.URI_ENVIRONMENT, uri);
        }
        return builder
                .redirectError(ProcessBuilder.Redirect.appendTo(new File(System.getProperty("java.io.tmpdir"),
                        "consistency-kit-" + logName + ".err")))
                .redirectOutput(args.contains("serve") ? ProcessBuilder.Redirect.PIPE
                        : ProcessBuilder.Redirect.DISCARD);
    }

    /**
     * One worker process's loop, until it is killed: operations of {@code pattern} on random accounts, and every
     * twentieth a recovery pass for operations stale for two seconds (those of killed workers).
     */
    public static void work(MongoDatabase db, String pattern, long seed) {
        Random random = new Random(seed);
        for (long n = 0; ; n++) {
            int a = random.nextInt(ACCOUNTS);
            int b = (a + 1 + random.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
            long amount = 1L + random.nextInt(5_000);
            try {
                switch (pattern) {
                    case "two-phase" -> {
                        TwoPhaseCommit tpc = TwoPhaseCommit.builder(db).retryPolicy(PatternLab.FAST_RETRY).build();
                        tpc.transfer(Transfer.of(OperationId.random(), "a" + a, "a" + b, amount));
                        if (n % 20 == 19) {
                            tpc.recover(WORKER_RECOVERY_AFTER);
                        }
                    }
                    case "job-queue" -> {
                        var queue = JobQueueLab.queue(db);
                        queue.fireSchedules();
                        switch (random.nextInt(3)) {
                            case 0 -> queue.enqueue(JobRequest.of("count", new Document("counter", "c"
                                    + random.nextInt(4))));
                            case 1 -> queue.enqueue(JobRequest.of("befriend", new Document("a", "u" + a % 4)
                                    .append("b", "u" + (a + 1) % 4)));
                            default -> JobQueueLab.enqueueKeyedPair(queue, random);
                        }
                        queue.processNext();
                        queue.processNext();
                        if (n % 20 == 19) {
                            queue.recover(WORKER_RECOVERY_AFTER);
                        }
                    }
                    case "log-reconciliation" -> {
                        var ledger = LedgerLab.ledger(db);
                        ledger.apply(LedgerTransaction.transfer("a" + a, "a" + b, amount));
                        if (n % 20 == 19) {
                            ledger.recover(WORKER_RECOVERY_AFTER);
                        }
                    }
                    default -> throw new IllegalArgumentException("no soak workload for pattern " + pattern);
                }
            } catch (ConsistencyException expected) {
                // insufficient funds, a conflict, a transient fault that outlasted its retries: not a violation
            }
        }
    }
}
