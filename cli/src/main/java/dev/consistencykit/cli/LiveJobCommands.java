package dev.consistencykit.cli;

import java.io.PrintWriter;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;

import org.bson.Document;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.testkit.MongoTarget;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code cancel}, {@code reschedule} and {@code rerun}: an operator's actions on jobs by id, in every job queue of a
 * database (or the one {@code --queue} names). Each is {@link JobQueueOperator#cancel}, {@link
 * JobQueueOperator#reschedule} or {@link JobQueueOperator#rerun} on each id as printed anywhere; an id that names no
 * job it could act on exits 1.
 */
final class LiveJobCommands {

    private LiveJobCommands() {
    }

    /** The jobs the three commands act on. */
    static final class Jobs {

        @Option(names = "--queue", paramLabel = "NAME", description = "only the job queue of this name")
        String queue;

        @Option(names = "--id", paramLabel = "ID", required = true, description = "the job, its id as printed"
                + " anywhere (bare hex for a job enqueued without an id of its own; repeatable)")
        List<String> ids = new ArrayList<>();

        List<JobQueue> queues(OperatorOptions.Scope scope, CommandSpec spec) {
            return DeadJobCommands.queues(scope, spec, queue);
        }
    }

    /** What one action did to one job: its id when it acted (a rerun's new id), empty when it did not. */
    @FunctionalInterface
    private interface Action {
        Optional<Object> apply(JobQueue queue, OperationId id);
    }

    /** Runs {@code action} on each id (each text tried as every id it may print as) in each queue. */
    private static int act(GlobalOptions parent, CommandSpec spec, OperatorOptions options, Jobs jobs, String verb,
                           Action action) {
        PrintWriter out = spec.commandLine().getOut();
        try (MongoTarget target = Target.open(parent)) {
            OperatorOptions.Scope scope = options.scope(target, out);
            List<JobQueue> queues = jobs.queues(scope, spec);
            List<Document> acted = new ArrayList<>();
            List<String> missed = new ArrayList<>();
            for (String printed : jobs.ids) {
                List<OperationId> candidates;
                try {
                    candidates = OperationId.printedAs(printed);
                } catch (IllegalArgumentException e) {
                    throw new ParameterException(spec.commandLine(), "--id " + printed + ": " + e.getMessage(), e);
                }
                boolean any = false;
                for (JobQueue queue : queues) {
                    for (OperationId id : candidates) {
                        Optional<Object> result = action.apply(queue, id);
                        if (result.isPresent()) {
                            any = true;
                            out.printf("  job-queue %-14s %s %s%s%n", queue.name(), verb, id,
                                    result.get().equals(id.value()) ? "" : " as " + result.get());
                            acted.add(new Document("queue", queue.name()).append("id", id.toString())
                                    .append("result", String.valueOf(result.get())));
                        }
                    }
                }
                if (!any) {
                    missed.add(printed);
                }
            }
            out.printf("%s %d job(s) in database %s on %s%n", verb, acted.size(), scope.name(), target.description());
            if (parent.json()) {
                out.println(Json.line(new Document("database", scope.name()).append(verb, acted.size())
                        .append("jobs", acted).append("idsNotFound", missed)));
            }
            if (!missed.isEmpty()) {
                spec.commandLine().getErr().println("no job it could act on with id " + String.join(", ", missed)
                        + " in database " + scope.name() + ": nothing " + verb + " (unknown, running, or not in a"
                        + " state the command acts on)");
                return ExitCodes.PROBLEMS_FOUND;
            }
            return ExitCodes.OK;
        }
    }

    @Command(name = "cancel", mixinStandardHelpOptions = true,
            description = "Cancel jobs that wait (due later, due now, failed and due again, or awaiting their key's"
                    + " turn): they never run, and are kept in state 'discarded'. A job a worker holds is left to"
                    + " finish. Safe while workers run.")
    static final class Cancel implements Callable<Integer> {

        @ParentCommand
        GlobalOptions parent;

        @Spec
        CommandSpec spec;

        @Mixin
        OperatorOptions options;

        @Mixin
        Jobs jobs;

        @Override
        public Integer call() {
            return act(parent, spec, options, jobs, "canceled",
                    (queue, id) -> queue.operator().cancel(id) ? Optional.of(id.value()) : Optional.empty());
        }
    }

    @Command(name = "reschedule", mixinStandardHelpOptions = true,
            description = "Move when jobs due later (or failed and due again) run: --at an instant, or --in a duration"
                    + " from now. Safe while workers run.")
    static final class Reschedule implements Callable<Integer> {

        /** When: exactly one of the two. */
        static final class When {
            @Option(names = "--at", paramLabel = "INSTANT", description = "an ISO-8601 instant, 2026-12-01T03:00:00Z")
            String at;

            @Option(names = "--in", paramLabel = "DURATION", description = "from now, as 90s, 15m, 2h or PT2H")
            String in;
        }

        @ParentCommand
        GlobalOptions parent;

        @Spec
        CommandSpec spec;

        @Mixin
        OperatorOptions options;

        @Mixin
        Jobs jobs;

        @ArgGroup(multiplicity = "1")
        When when;

        @Override
        public Integer call() {
            Instant at = instant();
            return act(parent, spec, options, jobs, "rescheduled",
                    (queue, id) -> queue.operator().reschedule(id, at) ? Optional.of(id.value()) : Optional.empty());
        }

        private Instant instant() {
            try {
                if (when.at != null) {
                    return Instant.parse(when.at);
                }
                String text = when.in.trim();
                Duration d = text.toUpperCase(java.util.Locale.ROOT).startsWith("P") ? Duration.parse(text)
                        : Duration.parse("PT" + text.toUpperCase(java.util.Locale.ROOT));
                return Instant.now().plus(d);
            } catch (DateTimeException e) {
                throw new ParameterException(spec.commandLine(), (when.at != null ? "--at " + when.at : "--in "
                        + when.in) + " is no " + (when.at != null ? "instant" : "duration") + ": " + e.getMessage(), e);
            }
        }
    }

    @Command(name = "rerun", mixinStandardHelpOptions = true,
            description = "Run finished jobs (done, discarded or dead) again, each as a new job with the same type and"
                    + " payload, whose id names the old one (<id>/rerun/<ObjectId>).")
    static final class Rerun implements Callable<Integer> {

        @ParentCommand
        GlobalOptions parent;

        @Spec
        CommandSpec spec;

        @Mixin
        OperatorOptions options;

        @Mixin
        Jobs jobs;

        @Override
        public Integer call() {
            return act(parent, spec, options, jobs, "reran", (queue, id) ->
                    queue.operator().rerun(id).map(OperationId::value));
        }
    }
}
