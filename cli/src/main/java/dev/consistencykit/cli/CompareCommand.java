package dev.consistencykit.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

import org.bson.Document;

import dev.consistencykit.cli.lab.CompareReport;
import dev.consistencykit.cli.lab.Comparison;
import dev.consistencykit.testkit.MongoTarget;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code compare}: the same workloads through every applicable pattern, with crashes, side by side. */
@Command(name = "compare", mixinStandardHelpOptions = true,
        description = "Run the bank-transfer workload through the naive loop, two-phase commit (both variants), log"
                + " reconciliation, the job queue and versioned documents, and the rename workload through the sync"
                + " flag and the job queue, each in the configuration its README recommends, with callers that crash"
                + " at random writes, readers of the raw documents and of the pattern's own consistent read, and"
                + " recovery; print throughput, round trips (caller and background), latency, reader anomalies,"
                + " recovery time and violations. The same --seed gives the same crash schedule. Ctrl-C prints the"
                + " rows finished (and writes --report) before exiting with 130.")
final class CompareCommand implements Callable<Integer> {

    @ParentCommand
    GlobalOptions parent;

    @Spec
    CommandSpec spec;

    @Option(names = "--seconds", paramLabel = "S", defaultValue = "3",
            description = "how long each pattern's writers run (default: ${DEFAULT-VALUE})")
    int seconds;

    @Option(names = "--writers", paramLabel = "N", defaultValue = "4",
            description = "concurrent writers (default: ${DEFAULT-VALUE})")
    int writers;

    @Option(names = "--readers", paramLabel = "N", defaultValue = "1",
            description = "concurrent readers (default: ${DEFAULT-VALUE})")
    int readers;

    @Option(names = "--crash-rate", paramLabel = "P", defaultValue = "0.02",
            description = "chance that a write crashes its process (default: ${DEFAULT-VALUE})")
    double crashRate;

    @Option(names = "--seed", defaultValue = "1",
            description = "seed of workloads and crashes (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--report", paramLabel = "FILE", description = "also write a self-contained HTML report")
    Path report;

    @Override
    public Integer call() throws IOException {
        if (seconds < 1 || writers < 1 || readers < 1 || crashRate < 0 || crashRate >= 1) {
            throw new ParameterException(spec.commandLine(), "--seconds, --writers and --readers must be >= 1 and"
                    + " --crash-rate in [0, 1)");
        }
        if (report != null) {
            // checked before minutes of work, not after
            Path dir = report.toAbsolutePath().getParent();
            if (dir == null || !Files.isDirectory(dir) || !Files.isWritable(dir) || Files.isDirectory(report)
                    || (Files.exists(report) && !Files.isWritable(report))) {
                throw new ParameterException(spec.commandLine(), "--report " + report + ": cannot write there ("
                        + (dir == null || !Files.isDirectory(dir) ? "no directory " + dir : Files.isDirectory(report)
                        ? "it is a directory" : "not writable") + "); nothing was run");
            }
        }
        PrintWriter out = spec.commandLine().getOut();
        Progress progress = new Progress(spec.commandLine().getErr(), parent.json());
        try (MongoTarget target = Target.open(parent)) {
            Comparison.Result result = Comparison.run(target, new Comparison.Settings(
                    Duration.ofSeconds(seconds), writers, readers, crashRate, seed), progress);
            progress.done();
            List<Comparison.Entry> entries = result.entries();
            String command = String.format(Locale.ROOT, "consistency-kit compare --seconds %d --writers %d --readers"
                    + " %d --crash-rate %s --seed %d on %s", seconds, writers, readers, crashRate, seed,
                    target.description());
            print(out, result, command);
            if (report != null) {
                try {
                    Files.writeString(report, CompareReport.html(result, command), StandardCharsets.UTF_8);
                } catch (IOException e) {
                    throw new CommandFailedException("could not write the report to " + report + ": " + e, e);
                }
                out.println("report written to " + report.toAbsolutePath());
            }
            if (parent.json()) {
                out.println(Json.line(new Document("command", command).append("interrupted", result.interrupted())
                        .append("entries", entries.stream().map(Comparison.Entry::json).toList())));
            }
            if (result.interrupted()) {
                return ExitCodes.INTERRUPTED;
            }
            boolean patternsClean = entries.stream().filter(e -> !"naive".equals(e.pattern()))
                    .allMatch(e -> e.violations().isEmpty());
            return patternsClean ? ExitCodes.OK : ExitCodes.PROBLEMS_FOUND;
        }
    }

    private static void print(PrintWriter out, Comparison.Result result, String command) {
        out.println(command);
        String format = "%-32s %-13s %7s %5s %5s %6s %6s %7s %7s %16s %16s %9s %4s%n";
        out.printf(format, "pattern", "workload", "ops/s", "RT/op", "bg RT", "wr/op", "p50 ms", "p99 ms", "crashes",
                "raw anomalies", "pattern anomal.", "recovery", "viol");
        for (Comparison.Entry e : result.entries()) {
            out.printf(format, e.name(), e.workload(), fmt(e.opsPerSec(), 0), fmt(e.roundTripsPerOp(), 1),
                    fmt(e.backgroundRoundTripsPerOp(), 1), fmt(e.writesPerOp(), 1), fmt(e.p50Millis(), 2),
                    fmt(e.p99Millis(), 2), e.crashes(), e.rawReaderAnomalies() + "/" + e.rawReads(),
                    e.patternReaderAnomalies().map(n -> n + "/" + e.patternReads()).orElse("none"),
                    e.recoverySeconds().map(s -> fmt(s, 2) + " s").orElse("never"), e.violations().size());
        }
        out.println();
        out.println("What the anomalies mean:");
        for (Comparison.Entry e : result.entries()) {
            out.println("  " + e.name() + ": " + e.anomalies() + (e.note().isEmpty() ? "" : " (" + e.note() + ")"));
        }
        if (result.interrupted()) {
            out.println();
            out.println("interrupted: " + result.entries().size() + " of " + result.contenders()
                    + " patterns finished; their rows are above");
        }
    }

    private static String fmt(double v, int decimals) {
        return String.format(Locale.ROOT, "%." + decimals + "f", v);
    }
}
