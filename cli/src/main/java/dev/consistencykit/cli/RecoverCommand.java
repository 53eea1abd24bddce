package dev.consistencykit.cli;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import org.bson.Document;

import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.dashboard.DashboardInstance;
import dev.consistencykit.testkit.MongoTarget;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code recover}: each pattern's own recovery on a database, printing what it did. */
@Command(name = "recover", mixinStandardHelpOptions = true,
        description = "Run the recovery of every pattern present in a database: finish or undo its interrupted"
                + " operations (for the job queue: requeue jobs whose worker died, for the application's workers to"
                + " run). Safe to run while the application runs, and from many processes at once.")
final class RecoverCommand implements Callable<Integer> {

    @ParentCommand
    GlobalOptions parent;

    @Spec
    CommandSpec spec;

    @Mixin
    OperatorOptions options;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (MongoTarget target = Target.open(parent)) {
            OperatorOptions.Scope scope = options.scope(target, out);
            String name = scope.name();
            boolean exists = scope.exists();
            List<DashboardInstance> present = scope.present();
            out.printf("recovering in database %s on %s: %d pattern instance(s) %s; operations with no progress for %s"
                    + " or more (--stale-after)%n", name, target.description(), present.size(), scope.instances(),
                    OperatorOptions.show(options.staleAfter));
            List<Document> reports = new ArrayList<>();
            int repaired = 0;
            long younger = 0;
            long deadTotal = 0;
            for (DashboardInstance p : present) {
                RecoveryReport r = p.recover().apply(options.staleAfter);
                repaired += r.repaired();
                List<InterruptedOperation> after = p.strategy().interrupted(Duration.ZERO, YOUNGER_LIMIT);
                long dead = after.stream().filter(op -> op.state().equals("dead")).count();
                long left = options.staleAfter.isZero() ? 0 : after.size() - dead;
                younger += left;
                deadTotal += dead;
                out.printf("  %-19s %-14s examined %d, finished %d, undone or requeued %d, left to another process %d"
                        + " (%d ms)%s%n", p.pattern(), r.instanceName(), r.examined(), r.rolledForward(),
                        r.rolledBack(), r.skipped(), r.elapsed().toMillis(),
                        (left == 0 ? "" : "; " + left + " still in flight") + (dead == 0 ? ""
                                : "; " + dead + " dead, waiting for an operator (replay or discard)"));
                reports.add(new Document("pattern", p.pattern()).append("name", r.instanceName())
                        .append("examined", r.examined()).append("rolledForward", r.rolledForward())
                        .append("rolledBack", r.rolledBack()).append("skipped", r.skipped())
                        .append("stillInFlight", left).append("dead", dead));
            }
            if (present.isEmpty()) {
                out.println("nothing to recover: no pattern's collections in this database");
            } else if (younger > 0) {
                out.printf("operations still in flight were younger than %s, or are being driven by their owner; they"
                        + " are left alone (--stale-after 0 takes them over, which is safe but competes with a live"
                        + " owner)%n", OperatorOptions.show(options.staleAfter));
            }
            if (deadTotal > 0) {
                out.printf("dead jobs are not recovered: their last attempt failed; `consistency-kit inspect` lists"
                        + " them with their error, `replay` runs them again, `discard` sets them aside%n");
            }
            if (parent.json()) {
                out.println(Json.line(new Document("database", name).append("databaseExists", exists)
                        .append("staleAfterSeconds", options.staleAfter.toMillis() / 1000.0).append("repaired",
                                repaired).append("recovered", reports)));
            }
            return 0;
        }
    }

    /** The most in-flight operations counted per instance after recovery. */
    private static final int YOUNGER_LIMIT = 1_000;
}
