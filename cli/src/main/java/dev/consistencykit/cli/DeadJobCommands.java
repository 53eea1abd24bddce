package dev.consistencykit.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import org.bson.Document;

import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.dashboard.DashboardInstance;
import dev.consistencykit.jobqueue.DeadJobs;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobQueueOperator;
import dev.consistencykit.testkit.MongoTarget;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code replay} and {@code discard}: an operator's dead letters, in every job queue of a database (or the one
 * {@code --queue} names), selected by {@code --type}, {@code --error-containing} and {@code --id}, or {@code --all}.
 */
final class DeadJobCommands {

    private DeadJobCommands() {
    }

    /** The selection options both commands share. */
    static final class Selection {

        @Option(names = "--queue", paramLabel = "NAME", description = "only the job queue of this name")
        String queue;

        @Option(names = "--type", paramLabel = "TYPE", description = "only dead jobs of this type")
        String type;

        @Option(names = "--error-containing", paramLabel = "TEXT",
                description = "only dead jobs whose last error contains this text (matched literally)")
        String errorContaining;

        @Option(names = "--id", paramLabel = "ID", description = "only this job, its id as printed anywhere (bare hex"
                + " for a job enqueued without an id of its own; repeatable)")
        List<String> ids = new ArrayList<>();

        @Option(names = "--all", description = "every dead job (needed when no --type, --error-containing or --id"
                + " narrows the selection)")
        boolean all;

        DeadJobs deadJobs(CommandSpec spec) {
            boolean narrowed = type != null || errorContaining != null || !ids.isEmpty();
            if (!narrowed && !all) {
                throw new ParameterException(spec.commandLine(), "select the dead jobs: --type, --error-containing,"
                        + " --id, or --all for every one");
            }
            try {
                DeadJobs which = ids.isEmpty() ? DeadJobs.all() : DeadJobs.printed(ids);
                if (type != null) {
                    which = which.ofType(type);
                }
                return errorContaining == null ? which : which.errorContaining(errorContaining);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), e.getMessage(), e);
            }
        }

        List<JobQueue> queues(OperatorOptions.Scope scope, CommandSpec spec) {
            return DeadJobCommands.queues(scope, spec, queue);
        }
    }

    /** The job queues of {@code scope}, or the one named {@code queue}; a usage error when there is none. */
    static List<JobQueue> queues(OperatorOptions.Scope scope, CommandSpec spec, String queue) {
        List<JobQueue> found = new ArrayList<>();
        for (DashboardInstance p : scope.present()) {
            p.queue().filter(q -> queue == null || q.name().equals(queue)).ifPresent(found::add);
        }
        if (found.isEmpty()) {
            throw new ParameterException(spec.commandLine(), (queue == null ? "no job queue"
                    : "no job queue named " + queue) + " in database " + scope.name() + "; instances there: "
                    + scope.instances());
        }
        return found;
    }

    /** Runs {@code action} on each queue; prints one line per queue and the JSON summary. */
    private static int act(GlobalOptions parent, CommandSpec spec, OperatorOptions options, Selection selection,
                           String verb, ActionOnQueue action) {
        DeadJobs which = selection.deadJobs(spec);
        PrintWriter out = spec.commandLine().getOut();
        try (MongoTarget target = Target.open(parent)) {
            OperatorOptions.Scope scope = options.scope(target, out);
            List<Document> done = new ArrayList<>();
            long total = 0;
            for (JobQueue queue : selection.queues(scope, spec)) {
                long n = action.apply(queue.operator(), which);
                total += n;
                List<InterruptedOperation> left = queue.operator().dead(which, 0, 1);
                out.printf("  job-queue %-14s %s %d %s%s%n", queue.name(), verb, n, which,
                        left.isEmpty() ? "" : " (some still dead: another process made them dead meanwhile)");
                done.add(new Document("name", queue.name()).append(verb, n));
            }
            out.printf("%s %d dead job(s) in database %s on %s%n", verb, total, scope.name(), target.description());
            if (parent.json()) {
                out.println(Json.line(new Document("database", scope.name()).append("selection", which.toString())
                        .append(verb, total).append("queues", done)));
            }
            if (total == 0 && !selection.ids.isEmpty()) {
                spec.commandLine().getErr().println("no dead job with id " + String.join(", ", selection.ids)
                        + " in database " + scope.name() + ": nothing " + verb);
                return ExitCodes.PROBLEMS_FOUND;   // a selection of named jobs that matched none is not a success
            }
            return ExitCodes.OK;
        }
    }

    @FunctionalInterface
    private interface ActionOnQueue {
        long apply(JobQueueOperator operator, DeadJobs which);
    }

    @Command(name = "replay", mixinStandardHelpOptions = true,
            description = "Put dead jobs back in their queue, attempts from zero, for the application's workers to"
                    + " run. Safe while workers run: a job moves only while it is dead.")
    static final class Replay implements Callable<Integer> {

        @ParentCommand
        GlobalOptions parent;

        @Spec
        CommandSpec spec;

        @Mixin
        OperatorOptions options;

        @Mixin
        Selection selection;

        @Override
        public Integer call() {
            return act(parent, spec, options, selection, "replayed", JobQueueOperator::replayDead);
        }
    }

    @Command(name = "discard", mixinStandardHelpOptions = true,
            description = "Discard dead jobs: kept with their error in state 'discarded', never run again (the marks"
                    + " of the effects they applied are removed; the effects stay). With --delete, delete them"
                    + " instead (a job its writer still holds is reduced to its id until released). Safe while"
                    + " workers run.")
    static final class Discard implements Callable<Integer> {

        @ParentCommand
        GlobalOptions parent;

        @Spec
        CommandSpec spec;

        @Mixin
        OperatorOptions options;

        @Mixin
        Selection selection;

        @Option(names = "--delete", description = "delete the dead (and already discarded) jobs instead of keeping"
                + " them")
        boolean delete;

        @Override
        public Integer call() {
            return delete ? act(parent, spec, options, selection, "deleted", JobQueueOperator::deleteDead)
                    : act(parent, spec, options, selection, "discarded", JobQueueOperator::discardDead);
        }
    }
}
