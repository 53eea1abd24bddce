package dev.consistencykit.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

import dev.consistencykit.cli.lab.ChaosReport;
import dev.consistencykit.cli.lab.PatternLab;
import dev.consistencykit.testkit.MongoTarget;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code chaos <pattern>}: crash-point exploration plus seeded chaos. Exit code 1 on any violation. */
@Command(name = "chaos", mixinStandardHelpOptions = true,
        description = "Crash a pattern at every write site in every fault mode, then run seeded chaos; check every"
                + " invariant on data read back.")
final class ChaosCommand implements Callable<Integer> {

    @ParentCommand
    GlobalOptions parent;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "<pattern>", description = "the pattern: ${COMPLETION-CANDIDATES}",
            completionCandidates = PatternNames.class)
    String pattern;

    @Option(names = "--seeds", paramLabel = "N", defaultValue = "200",
            description = "seeded chaos runs (default: ${DEFAULT-VALUE})")
    int seeds;

    @Override
    public Integer call() {
        PatternLab lab = PatternNames.lab(spec, pattern);
        if (seeds < 1) {
            throw new ParameterException(spec.commandLine(), "--seeds must be >= 1, was " + seeds);
        }
        PrintWriter out = spec.commandLine().getOut();
        Progress progress = new Progress(spec.commandLine().getErr(), parent.json());
        try (MongoTarget target = Target.open(parent)) {
            ChaosReport report = lab.chaos(target, seeds, progress);
            progress.done();
            if (parent.json()) {
                out.println(Json.line(report.json()));
            } else {
                out.printf("%s on %s: %d write sites, %d crash scenarios, %d interleavings, %d chaos seeds (%d"
                        + " operations, %d crashes, %d faults): %d violations%n", report.pattern(),
                        target.description(), report.writeSites(), report.scenarios(), report.interleavings(),
                        report.seeds(), report.operations(), report.crashes(), report.faults(), report.violations());
                report.details().forEach(d -> out.println("  - " + d));
            }
            return report.violations() == 0 ? 0 : 1;
        }
    }
}
