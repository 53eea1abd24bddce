package dev.consistencykit.examples.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

import org.bson.Document;

import dev.consistencykit.examples.lab.CompareReport;
import dev.consistencykit.examples.lab.Comparison;
import dev.consistencykit.testkit.MongoTarget;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code compare}: the same workloads through every applicable pattern, with crashes, side by side. */
@Command(name = "compare", mixinStandardHelpOptions = true,
        description = "Run the bank-transfer workload through the naive loop, two-phase commit (both variants), log"
                + " reconciliation, the job queue and versioned documents, and the rename workload through the sync"
                + " flag, each with concurrent writers that crash at random, concurrent readers and recovery; print"
                + " throughput, cost, latency, reader anomalies, recovery time and violations.")
final class CompareCommand implements Callable<Integer> {

    @ParentCommand
    ConsistencyKitCli parent;

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
    public Integer call() throws InterruptedException, IOException {
        if (seconds < 1 || writers < 1 || readers < 1 || crashRate < 0 || crashRate >= 1) {
            throw new ParameterException(spec.commandLine(), "--seconds, --writers and --readers must be >= 1 and"
                    + " --crash-rate in [0, 1)");
        }
        PrintWriter out = spec.commandLine().getOut();
        Progress progress = new Progress(spec.commandLine().getErr(), parent.json);
        try (MongoTarget target = Target.open(parent.uri)) {
            List<Comparison.Entry> entries = Comparison.run(target, new Comparison.Settings(
                    Duration.ofSeconds(seconds), writers, readers, crashRate, seed), progress);
            progress.done();
            String command = String.format("consistency-kit compare --seconds %d --writers %d --readers %d"
                    + " --crash-rate %s --seed %d on %s", seconds, writers, readers, crashRate, seed,
                    target.description());
            print(out, entries, command);
            if (report != null) {
                Files.writeString(report, CompareReport.html(entries, command), StandardCharsets.UTF_8);
                out.println("report written to " + report.toAbsolutePath());
            }
            if (parent.json) {
                out.println(Json.line(new Document("command", command)
                        .append("entries", entries.stream().map(Comparison.Entry::json).toList())));
            }
            boolean patternsClean = entries.stream().filter(e -> !"naive".equals(e.pattern()))
                    .allMatch(e -> e.violations().isEmpty());
            return patternsClean ? 0 : 1;
        }
    }

    private static void print(PrintWriter out, List<Comparison.Entry> entries, String command) {
        out.println(command);
        String format = "%-32s %-13s %8s %6s %6s %7s %7s %7s %18s %9s %10s%n";
        out.printf(format, "pattern", "workload", "ops/s", "RT/op", "wr/op", "p50 ms", "p99 ms", "crashes",
                "reader anomalies", "recovery", "violations");
        for (Comparison.Entry e : entries) {
            out.printf(format, e.name(), e.workload(), String.format("%.0f", e.opsPerSec()),
                    String.format("%.1f", e.roundTripsPerOp()), String.format("%.1f", e.writesPerOp()),
                    String.format("%.2f", e.p50Millis()), String.format("%.2f", e.p99Millis()), e.crashes(),
                    e.readerAnomalies() + " of " + e.reads(),
                    e.recoverySeconds().map(s -> String.format("%.2f s", s)).orElse("never"),
                    e.violations().size());
        }
    }
}
