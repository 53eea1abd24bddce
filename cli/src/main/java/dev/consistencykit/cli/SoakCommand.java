package dev.consistencykit.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;

import dev.consistencykit.cli.lab.Soak;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code soak}: worker processes killed with SIGKILL and restarted, then recovery and every invariant. */
@Command(name = "soak", mixinStandardHelpOptions = true,
        description = "Run two-phase, job-queue and ledger workers in their own processes against a server in its"
                + " own process, kill them with SIGKILL at random moments and restart them; then recover and check"
                + " every invariant on data read back.")
final class SoakCommand implements Callable<Integer> {

    /** How often a soak not on a terminal prints a progress line. */
    static final Duration PROGRESS_EVERY = Duration.ofSeconds(10);

    @ParentCommand
    GlobalOptions parent;

    @Spec
    CommandSpec spec;

    @Option(names = "--minutes", paramLabel = "N", description = "how long to kill and restart workers")
    Integer minutes;

    @Option(names = "--seconds", paramLabel = "S", defaultValue = "60",
            description = "the same in seconds, when --minutes is not given (default: ${DEFAULT-VALUE})")
    int seconds;

    @Option(names = "--workers", paramLabel = "N", defaultValue = "1",
            description = "worker processes per pattern (default: ${DEFAULT-VALUE})")
    int workers;

    @Option(names = "--seed", defaultValue = "1", description = "seed of the kill schedule (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--database", paramLabel = "NAME",
            description = "the database to soak in, which must not exist (default: a fresh name); what another tool"
                    + " such as 'dashboard --database NAME' watches")
    String database;

    @Override
    public Integer call() throws IOException {
        Duration duration = minutes != null ? Duration.ofMinutes(minutes) : Duration.ofSeconds(seconds);
        if (duration.isNegative() || duration.isZero() || workers < 1) {
            throw new ParameterException(spec.commandLine(), "--minutes/--seconds and --workers must be >= 1");
        }
        PrintWriter out = spec.commandLine().getOut();
        Progress progress = new Progress(spec.commandLine().getErr(), parent.json());
        String uri = parent.uri() != null ? parent.uri() : System.getenv("MONGODB_URI");
        PrintWriter err = spec.commandLine().getErr();
        long[] lastLine = {System.nanoTime() - PROGRESS_EVERY.toNanos()};
        // a long command says what it does: the start line and every phase whole, the kills every 10 s, on standard
        // error (standard output stays the result); on a terminal the in-place line as well
        Soak.Report report = Soak.run(new Soak.Settings(duration, workers, seed, uri, database), step -> {
            long now = System.nanoTime();
            boolean phase = !step.contains("killed with SIGKILL");
            if (!progress.enabled() && (phase || now - lastLine[0] >= PROGRESS_EVERY.toNanos())) {
                err.println(step);
                err.flush();
                if (!phase) {
                    lastLine[0] = now;
                }
            }
            progress.accept(step);
        });
        progress.done();
        if (parent.json()) {
            out.println(Json.line(report.json()));
        } else if (report.interrupted()) {
            out.printf("soak interrupted after %.0f s: %s killed with SIGKILL and restarted; operations %s; every"
                    + " worker stopped; recovery run; %d invariant violations; the server stopped%n", report.seconds(),
                    Soak.workersKilled(report.kills()), report.operations(), report.violations().size());
            report.violations().forEach(v -> out.println("  " + v));
        } else {
            out.printf("soak: %.0f s, %s killed with SIGKILL and restarted; operations %s; %d invariant"
                    + " violations%n", report.seconds(), Soak.workersKilled(report.kills()), report.operations(),
                    report.violations().size());
            report.violations().forEach(v -> out.println("  " + v));
        }
        if (report.interrupted()) {
            return ExitCodes.INTERRUPTED;
        }
        return report.violations().isEmpty() ? ExitCodes.OK : ExitCodes.PROBLEMS_FOUND;
    }
}
