package dev.consistencykit.examples.cli;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;

import org.bson.Document;

import dev.consistencykit.examples.tour.Narration;
import dev.consistencykit.examples.tour.Tour;
import dev.consistencykit.testkit.MongoTarget;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code tour}: each pattern's example on its natural use case, narrated, with a crash and recovery each. */
@Command(name = "tour", mixinStandardHelpOptions = true,
        description = "Run one example per pattern, narrating every write and what a reader sees; crash one step of"
                + " each on purpose and show recovery repairing it.")
final class TourCommand implements Callable<Integer> {

    @ParentCommand
    ConsistencyKitCli parent;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (MongoTarget target = Target.open(parent)) {
            out.println("consistency-kit tour on " + target.description());
            Narration narration = Narration.to(out);
            List<Document> results = Tour.run(target, narration);
            long failed = results.stream().filter(r -> !r.getList("problems", String.class).isEmpty()).count();
            out.println();
            out.println(failed == 0 ? "All " + results.size() + " patterns stayed consistent through their crash."
                    : failed + " of " + results.size() + " examples found problems: " + narration.problems());
            if (parent.json) {
                out.println(Json.line(new Document("examples", results.size())
                        .append("problems", narration.problems().size()).append("results", results)));
            }
            return failed == 0 ? 0 : 1;
        }
    }
}
