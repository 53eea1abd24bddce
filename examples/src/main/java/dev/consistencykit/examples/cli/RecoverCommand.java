package dev.consistencykit.examples.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.testkit.MongoTarget;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code recover}: each pattern's own recovery on a database, printing what it did. */
@Command(name = "recover", mixinStandardHelpOptions = true,
        description = "Run the recovery of every pattern present in a database: finish or undo its interrupted"
                + " operations (for the job queue: requeue jobs whose worker died, for the application's workers to"
                + " run). Safe to run while the application runs, and from many processes at once.")
final class RecoverCommand implements Callable<Integer> {

    @ParentCommand
    ConsistencyKitCli parent;

    @Spec
    CommandSpec spec;

    @Mixin
    OperatorOptions options;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (MongoTarget target = Target.open(parent)) {
            MongoDatabase db = target.client().getDatabase(options.databaseName(target));
            List<Document> reports = new ArrayList<>();
            int repaired = 0;
            for (PatternsPresent p : PatternsPresent.on(db)) {
                RecoveryReport r = p.recover().apply(options.staleAfter);
                repaired += r.repaired();
                out.printf("%-19s %-14s examined %d, finished %d, undone or requeued %d, left to another process %d"
                        + " (%d ms)%n", p.pattern(), r.instanceName(), r.examined(), r.rolledForward(), r.rolledBack(),
                        r.skipped(), r.elapsed().toMillis());
                reports.add(new Document("pattern", p.pattern()).append("name", r.instanceName())
                        .append("examined", r.examined()).append("rolledForward", r.rolledForward())
                        .append("rolledBack", r.rolledBack()).append("skipped", r.skipped()));
            }
            if (parent.json) {
                out.println(Json.line(new Document("database", db.getName()).append("repaired", repaired)
                        .append("recovered", reports)));
            }
            return 0;
        }
    }
}
