package dev.consistencykit.examples.cli;

import java.io.PrintWriter;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/**
 * {@code consistency-kit}: run the patterns' examples, compare them, and check a server, against the embedded
 * server or a real MongoDB ({@code --uri} or {@code MONGODB_URI}).
 */
@Command(name = "consistency-kit", mixinStandardHelpOptions = true, version = "consistency-kit 0.1.0-SNAPSHOT",
        description = "Reliable multi-document changes on MongoDB without native transactions.",
        subcommands = {TourCommand.class, VerifyServerCommand.class, ServeCommand.class, ChaosCommand.class,
                BenchCommand.class, SoakCommand.class, InspectCommand.class, RecoverCommand.class,
                CompareCommand.class, SoakWorkerCommand.class})
public final class ConsistencyKitCli implements Runnable {

    @Option(names = "--uri", scope = ScopeType.INHERIT, paramLabel = "<mongodb-uri>",
            description = "MongoDB connection string (default: MONGODB_URI, else the embedded server)")
    String uri;

    @Option(names = "--json", scope = ScopeType.INHERIT,
            description = "print one JSON object as the last line of standard output")
    boolean json;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** Runs the CLI and returns its exit code. */
    public static int execute(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cli = new CommandLine(new ConsistencyKitCli());
        cli.setOut(out);
        cli.setErr(err);
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            commandLine.getErr().println("consistency-kit: " + e.getClass().getSimpleName() + ": " + e.getMessage());
            return 2;
        });
        return cli.execute(args);
    }

    /** Entry point. */
    public static void main(String[] args) {
        PrintWriter out = new PrintWriter(System.out, true);
        PrintWriter err = new PrintWriter(System.err, true);
        int code = execute(out, err, args);
        out.flush();
        err.flush();
        System.exit(code);
    }
}
