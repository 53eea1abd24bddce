package dev.consistencykit.cli;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

import org.bson.Document;

import dev.consistencykit.cli.lab.Bench;
import dev.consistencykit.cli.lab.BenchReport;
import dev.consistencykit.cli.lab.PatternLab;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.QueryPlans;
import dev.consistencykit.testkit.Sharding;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code bench <pattern>}: throughput and round trips per operation against raw single-document updates. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Measure a pattern's throughput and round trips per operation against raw single-document"
                + " updates measured in the same run. An unmeasured warm-up comes first (3 s of the pattern, 1 s of"
                + " raw updates, so that the measured phases see compiled code); then each side runs --seconds in"
                + " six alternating phases. Expect a run to take about 4 s + 2 x --seconds, plus setting up.")
final class BenchCommand implements Callable<Integer> {

    @ParentCommand
    GlobalOptions parent;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "<pattern>", description = "the pattern: ${COMPLETION-CANDIDATES}",
            completionCandidates = PatternNames.class)
    String pattern;

    @Option(names = "--threads", paramLabel = "N", defaultValue = "1",
            description = "concurrent clients for both the pattern and the raw baseline (default: ${DEFAULT-VALUE})")
    int threads;

    @Option(names = "--seconds", paramLabel = "S", defaultValue = "3",
            description = "measured time of each side, pattern and raw, after the warm-up (default: ${DEFAULT-VALUE})")
    int seconds;

    @Option(names = "--variant", paramLabel = "NAME", description = "the configuration of the pattern to measure,"
            + " where it has several (log-reconciliation: query, the default, or counter: how appends number their"
            + " changes; job-queue: apply, the default, keyed: an enqueue on an ordering key, or backlog: the same"
            + " behind 2,000 waiting jobs of the key)")
    String variant;

    @Option(names = "--shard", description = "shard the benchmark's collections as docs/operations.md recommends"
            + " before measuring (the raw updates' too), on a server that can: a mongos, or the distributed engine"
            + " with CONSISTENCY_KIT_SHARD_COMMAND naming its shard script")
    boolean shard;

    @Option(names = "--plans", description = "after measuring, the server's plan for each shape of query the run"
            + " sent (an update's, delete's or findAndModify's as the find of its filter, sort and limit), with the"
            + " documents in its collection, what it returned, what it examined where the server says, and the"
            + " median of 11 reads, against the data the run left")
    boolean plans;

    @Option(names = "--hot", description = "every operation touches one hot document (a merchant account, a"
            + " counter); reports that document's size before and after and the throughput of the first and last"
            + " tenth (two-phase, job-queue)")
    boolean hot;

    @Option(names = "--operations", paramLabel = "N", defaultValue = "100000",
            description = "operations of the --hot run (default: ${DEFAULT-VALUE})")
    int operations;

    @Override
    public Integer call() {
        PatternLab lab = PatternNames.lab(spec, pattern);
        if (plans && hot) {
            throw new ParameterException(spec.commandLine(), "--plans explains the uncontended benchmark, not --hot");
        }
        if (shard && hot) {
            throw new ParameterException(spec.commandLine(), "--shard measures the uncontended benchmark, not --hot");
        }
        if (hot) {
            return hot(lab);
        }
        if (threads < 1 || seconds < 1) {
            throw new ParameterException(spec.commandLine(), "--threads and --seconds must be >= 1");
        }
        if (variant != null && !lab.variants().contains(variant)) {
            throw new ParameterException(spec.commandLine(), pattern + (lab.variants().isEmpty()
                    ? " has no --variant" : " has the variants " + String.join(", ", lab.variants()))
                    + ", not " + variant);
        }
        PrintWriter out = spec.commandLine().getOut();
        Progress progress = new Progress(spec.commandLine().getErr(), parent.json());
        Bench.start();
        try (MongoTarget target = Target.open(parent)) {
            if (shard) {
                Sharding.of(target.client()).unavailable().ifPresent(reason -> {
                    throw new ParameterException(spec.commandLine(), "--shard: " + reason);
                });
            }
            QueryPlans recorder = plans ? QueryPlans.attach(target.commandListeners()) : null;
            BenchReport report;
            List<QueryPlans.Plan> explained = List.of();
            try {
                report = lab.bench(target, new Bench.Settings(threads, Duration.ofSeconds(seconds),
                        variant == null ? "" : variant, shard, plans, Bench.WARM_UP), progress);
                if (recorder != null) {
                    progress.accept("explaining the queries the run sent");
                    explained = recorder.explain(target.client());
                }
            } finally {
                if (recorder != null) {
                    recorder.close();
                    recorder.databases().forEach(name -> target.client().getDatabase(name).drop());
                }
            }
            progress.done();
            boolean partial = Bench.stopped();
            if (parent.json()) {
                Document json = report.json().append("interrupted", partial).append("sharded", shard);
                if (plans) {
                    json.append("plans", explained.stream().map(QueryPlans.Plan::json).toList());
                }
                out.println(Json.line(setting(json, target)));
            } else {
                out.println(setting(target));
                String where = target.description() + (shard ? ", sharded as docs/operations.md recommends" : "");
                out.printf((partial ? "bench interrupted; partial figures: " : "") + "%s on %s, %d thread(s): %.0f"
                        + " ops/s, %.2f round trips and %.2f documents written per operation; raw single-document"
                        + " updates %.0f ops/s; ratio %.3f (ratio x round trips = %.2f)%n", report.pattern(), where,
                        report.threads(), report.opsPerSec(), report.roundTripsPerOp(), report.writesPerOp(),
                        report.rawOpsPerSec(), report.ratio(), report.ratio() * report.roundTripsPerOp());
                if (report.extra().get("rawInsertsPerSec") instanceof Number inserts) {
                    out.printf("raw inserts of what an operation writes, under the same indexes: %.0f ops/s (%s)"
                            + "%n", inserts.doubleValue(), report.extra().getString("rawInsertBaseline"));
                }
                if (plans) {
                    out.println("the server's plans for the queries the run sent, against the data it left (most"
                            + " sent first):");
                    explained.forEach(p -> out.println(p.line()));
                }
            }
            return partial ? ExitCodes.INTERRUPTED : 0;
        }
    }

    private Integer hot(PatternLab lab) {
        if (!lab.hasHotBench()) {
            throw new ParameterException(spec.commandLine(), pattern + " has no --hot benchmark (two-phase and"
                    + " job-queue have)");
        }
        if (operations < 10) {
            throw new ParameterException(spec.commandLine(), "--operations must be >= 10");
        }
        PrintWriter out = spec.commandLine().getOut();
        Progress progress = new Progress(spec.commandLine().getErr(), parent.json());
        Bench.start();
        try (MongoTarget target = Target.open(parent)) {
            BenchReport report = lab.benchHot(target, operations, progress);
            progress.done();
            boolean partial = Bench.stopped();
            if (parent.json()) {
                out.println(Json.line(setting(report.json().append("interrupted", partial), target)));
            } else {
                out.println(setting(target));
                Document x = report.extra();
                String tenths = partial ? "" : String.format(" (first tenth %.0f, last tenth %.0f)",
                        x.getDouble("opsPerSecFirstTenth"), x.getDouble("opsPerSecLastTenth"));
                String raw = Double.isNaN(report.rawOpsPerSec()) ? "not measured"
                        : String.format("%.0f ops/s", report.rawOpsPerSec());
                out.printf((partial ? "bench interrupted; partial figures: " : "") + "%s, hot document, on %s: %d"
                        + " operations, %.0f ops/s%s; hot document %d bytes before, %d after; %.2f round trips per"
                        + " operation; raw updates of the hot document %s%n", report.pattern(), target.description(),
                        report.operations(), report.opsPerSec(), tenths, x.getLong("hotDocumentBytesStart"),
                        x.getLong("hotDocumentBytesEnd"), report.roundTripsPerOp(), raw);
            }
            return partial ? ExitCodes.INTERRUPTED : 0;
        }
    }

    /**
     * Where the figures were measured: the machine's processors and load (another process busy beside the bench
     * lowers them), and the server: the embedded one unless {@code --uri} names another.
     */
    static String setting(MongoTarget target) {
        java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory
                .getOperatingSystemMXBean();
        double load = os.getSystemLoadAverage();
        return String.format(java.util.Locale.ROOT, "measured on %d CPU(s), load average %s over the last minute;"
                + " server: %s", os.getAvailableProcessors(), load < 0 ? "unknown" : String.format(
                java.util.Locale.ROOT, "%.2f", load), target.isEmbedded() ? "the embedded server, in this process"
                + " (its figures are CPU, not network: --uri measures your server)" : target.description());
    }

    private static Document setting(Document json, MongoTarget target) {
        java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory
                .getOperatingSystemMXBean();
        return json.append("cpus", os.getAvailableProcessors()).append("loadAverage", os.getSystemLoadAverage())
                .append("server", target.isEmbedded() ? "embedded" : target.description());
    }
}
