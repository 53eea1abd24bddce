package dev.consistencykit.cli;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;

import org.bson.Document;

import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.KeptRecord;
import dev.consistencykit.dashboard.Dashboard;
import dev.consistencykit.dashboard.DashboardInstance;
import dev.consistencykit.jobqueue.RecurringJob;
import dev.consistencykit.testkit.MongoTarget;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code inspect}: the interrupted operations (and dead jobs) of every pattern present in a database. Read-only; exits
 * 1 when it lists any.
 */
@Command(name = "inspect", mixinStandardHelpOptions = true,
        description = "List the interrupted operations of every pattern present in a database (2PC transactions in"
                + " flight, jobs past their lease, flagged masters, uncommitted ledger transactions, staged change"
                + " sets, dead jobs), with their age. Writes nothing; exits 1 when it lists any.")
final class InspectCommand implements Callable<Integer> {

    @ParentCommand
    GlobalOptions parent;

    @Spec
    CommandSpec spec;

    @Mixin
    OperatorOptions options;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "50",
            description = "the most operations listed per pattern instance (default: ${DEFAULT-VALUE})")
    int limit;

    @Override
    public Integer call() {
        if (limit < 1) {
            throw new ParameterException(spec.commandLine(), "--limit must be >= 1, was " + limit);
        }
        PrintWriter out = spec.commandLine().getOut();
        try (MongoTarget target = Target.open(parent)) {
            OperatorOptions.Scope scope = options.scope(target, out);
            String name = scope.name();
            boolean exists = scope.exists();
            List<DashboardInstance> present = scope.present();
            List<Document> listed = new ArrayList<>();
            List<Document> kept = new ArrayList<>();
            List<Document> recurring = new ArrayList<>();
            long younger = 0;
            for (DashboardInstance p : present) {
                if (p.queue().isPresent()) {
                    for (RecurringJob r : p.queue().get().operator().recurringJobs(0, limit)) {
                        recurring.add(new Document("queue", p.strategy().name())
                                .append("recurringJob", Dashboard.recurringView(r)));
                    }
                }
                for (KeptRecord k : p.strategy().kept(options.staleAfter, limit)) {
                    kept.add(new Document("pattern", p.pattern()).append("name", p.strategy().name())
                            .append("id", String.valueOf(k.id())).append("writer", k.writer())
                            .append("ageSeconds", k.age().toMillis() / 1000.0).append("compacted", k.compacted()));
                }
                List<InterruptedOperation> stale = p.strategy().interrupted(options.staleAfter, limit);
                for (InterruptedOperation op : stale) {
                    listed.add(new Document("pattern", p.pattern()).append("name", p.strategy().name())
                            .append("id", String.valueOf(op.id())).append("state", op.state())
                            .append("ageSeconds", op.age().toMillis() / 1000.0).append("detail", op.detail()));
                }
                if (!options.staleAfter.isZero()) {
                    younger += Math.max(0, p.strategy().interrupted(Duration.ZERO, limit).size() - stale.size());
                }
            }
            out.printf("looked in database %s on %s: %d pattern instance(s) %s; %d operation(s) with no progress for"
                    + " %s or more (--stale-after)%n", name, target.description(), present.size(), scope.instances(),
                    listed.size(), OperatorOptions.show(options.staleAfter));
            for (Document d : listed) {
                out.printf("  %-19s %-24s %-12s %8.1f s  %s%n", d.getString("pattern"), d.getString("id"),
                        d.getString("state"), d.getDouble("ageSeconds"), d.getString("detail"));
            }
            if (younger > 0) {
                out.printf("%d more in flight for less than %s, not listed (--stale-after 0 lists them)%n", younger,
                        OperatorOptions.show(options.staleAfter));
            }
            if (!kept.isEmpty()) {
                out.printf("%d record(s) still held by the call that wrote them, kept from prune and archive until"
                        + " that writer releases them (on its next recover, prune or close):%n", kept.size());
                for (Document d : kept) {
                    out.printf("  %-19s %-24s %8.1f s  writer %s%s%n", d.getString("pattern"), d.getString("id"),
                            d.getDouble("ageSeconds"), d.getString("writer"),
                            d.getBoolean("compacted") ? " (compacted: its content is gone)" : "");
                }
            }
            if (!recurring.isEmpty()) {
                out.printf("%d recurring job(s):%n", recurring.size());
                for (Document d : recurring) {
                    Document r = d.get("recurringJob", Document.class);
                    out.printf("  %-24s next %-24s last %-24s %s (%s)%n", r.getString("name"),
                            Objects.requireNonNullElse(r.getString("nextRun"), "none"),
                            Objects.requireNonNullElse(r.getString("lastRun"), "never"), r.getString("schedule"),
                            r.getString("type"));
                }
            }
            if (parent.json()) {
                out.println(Json.line(new Document("database", name).append("databaseExists", exists)
                        .append("staleAfterSeconds", options.staleAfter.toMillis() / 1000.0)
                        .append("patterns", present.stream().map(DashboardInstance::pattern).toList())
                        .append("count", listed.size()).append("youngerInFlight", younger)
                        .append("interrupted", listed).append("kept", kept).append("recurring", recurring)
                        .append("exitCode", listed.isEmpty() ? ExitCodes.OK : ExitCodes.PROBLEMS_FOUND)));
                parent.reportCarriesOutcome();
            }
            // found something an operator must act on: exit 1, as a check that failed (scripts and cron read it)
            return listed.isEmpty() ? ExitCodes.OK : ExitCodes.PROBLEMS_FOUND;
        }
    }
}
