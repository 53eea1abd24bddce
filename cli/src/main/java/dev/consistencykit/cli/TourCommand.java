package dev.consistencykit.cli;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;

import org.bson.Document;

import dev.consistencykit.examples.tour.Narration;
import dev.consistencykit.examples.tour.Tour;
import dev.consistencykit.examples.tour.TourExample;
import dev.consistencykit.testkit.MongoTarget;

import picocli.CommandLine.Command;
import picocli.CommandLine.Help.Ansi;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code tour}: the naive transfer losing money, then each pattern's example on its natural use case, narrated, with
 * a crash and recovery each.
 */
@Command(name = "tour", mixinStandardHelpOptions = true,
        description = "First the naive way (two plain updates) losing money to a crash; then one example per pattern,"
                + " one line per write and what a reader sees, with a crash on purpose and recovery repairing it.")
final class TourCommand implements Callable<Integer> {

    @ParentCommand
    GlobalOptions parent;

    @Spec
    CommandSpec spec;

    @Parameters(arity = "0..1", paramLabel = "<pattern>",
            description = "Run only this one: naive, sync-flag, job-queue, two-phase, log-reconciliation, versioning.")
    String only;

    @Option(names = "--wire", description = "Show each write as the full command the driver sent.")
    boolean wire;

    @Option(names = "--quiet", description = "Print only each example's outcome.")
    boolean quiet;

    /** Colour on a terminal (picocli's detection: not when piped), never with {@code NO_COLOR} set or {@code --json}. */
    static boolean colour(boolean terminal, String noColor, boolean json) {
        return terminal && (noColor == null || noColor.isEmpty()) && !json;
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        List<TourExample> examples = only == null ? Tour.EXAMPLES
                : Tour.EXAMPLES.stream().filter(e -> e.pattern().equals(only)).toList();
        if (examples.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "no example for '" + only + "': choose one of "
                    + Tour.EXAMPLES.stream().map(TourExample::pattern).toList());
        }
        if (wire && quiet) {
            throw new ParameterException(spec.commandLine(), "--wire and --quiet ask for opposite things: choose one");
        }
        Narration.Detail detail = quiet ? Narration.Detail.QUIET : wire ? Narration.Detail.WIRE
                : Narration.Detail.STORY;
        boolean colour = colour(Ansi.AUTO.enabled(), System.getenv("NO_COLOR"), parent.json());
        try (MongoTarget target = Target.open(parent)) {
            if (!quiet) {
                out.println("consistency-kit tour on " + target.description());
            }
            Narration narration = Narration.to(out, detail, colour);
            List<Document> results = Tour.run(target, narration, examples);
            long failed = results.stream().filter(r -> !r.getList("problems", String.class).isEmpty()).count();
            long patterns = results.stream().filter(r -> !r.getString("pattern").equals("naive")).count();
            if (!quiet) {
                out.println();
                out.println(failed > 0 ? failed + " of " + results.size() + " examples found problems: "
                        + narration.problems() : patterns == 0 ? "The naive transfer lost money, as it always can."
                        : "All " + patterns + " pattern" + (patterns == 1 ? "" : "s")
                        + " stayed consistent through their crash.");
            }
            if (parent.json()) {
                out.println(Json.line(new Document("examples", patterns)
                        .append("problems", narration.problems().size()).append("results", results)));
            }
            return failed == 0 ? 0 : 1;
        }
    }
}
