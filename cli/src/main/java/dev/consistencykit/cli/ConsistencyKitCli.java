package dev.consistencykit.cli;

import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;

import org.bson.Document;

import com.mongodb.MongoInterruptedException;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.OperationInterruptedException;
import dev.consistencykit.testkit.MongoTarget;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine;

/**
 * {@code consistency-kit}: run the patterns' examples, compare them, and check a server, against the embedded
 * server or a real MongoDB ({@code --uri} or {@code MONGODB_URI}).
 */
@Command(name = "consistency-kit", mixinStandardHelpOptions = true, version = "consistency-kit 0.1.0-SNAPSHOT",
        description = "Reliable multi-document changes on MongoDB without native transactions.",
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
            "0:Success: the command ran and found nothing wrong.",
            "1:Problems found: a failed check, a violated invariant, interrupted or dead operations (inspect).",
            "2:Usage error: unknown command or option, bad value, a --database that does not exist.",
            "3:Server unreachable within --server-timeout, or credentials refused.",
            "4:The command failed (the server refused an operation, a file could not be written).",
            "130:Interrupted (SIGINT/Ctrl-C or SIGTERM), after printing what was done."},
        subcommands = {TourCommand.class, VerifyServerCommand.class, ServeCommand.class, ChaosCommand.class,
                BenchCommand.class, SoakCommand.class, InspectCommand.class, RecoverCommand.class,
                DeadJobCommands.Replay.class, DeadJobCommands.Discard.class, LiveJobCommands.Cancel.class,
                LiveJobCommands.Reschedule.class, LiveJobCommands.Rerun.class,
                CompareCommand.class, DashboardCommand.class, SoakWorkerCommand.class})
public final class ConsistencyKitCli implements Runnable, GlobalOptions {

    /**
     * Set by a command whose JSON report ends with its own {@code exitCode} (inspect's findings): that report stays the
     * last line, instead of a generic error line after it.
     */
    boolean outcomeInReport;

    @Option(names = "--uri", scope = ScopeType.INHERIT, paramLabel = "<mongodb-uri>",
            description = "MongoDB connection string (default: MONGODB_URI, else the embedded server)")
    String uri;

    @Option(names = "--json", scope = ScopeType.INHERIT,
            description = "print one JSON object as the last line of standard output; on failure"
                    + " {\"error\": ..., \"exitCode\": N}")
    boolean json;

    @Option(names = "--server-timeout", scope = ScopeType.INHERIT, paramLabel = "DURATION", defaultValue = "10s",
            converter = OperatorOptions.DurationConverter.class,
            description = "how long to wait for a server given by URI to answer before giving up, like 10s or 500ms"
                    + " (default: ${DEFAULT-VALUE})")
    Duration serverTimeout;

    @Override
    public String uri() {
        return uri;
    }

    @Override
    public boolean json() {
        return json;
    }

    @Override
    public Duration serverTimeout() {
        return serverTimeout;
    }

    @Override
    public void reportCarriesOutcome() {
        outcomeInReport = true;
    }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "name a command, like 'consistency-kit tour'");
    }

    /** Runs the CLI and returns its exit code. */
    public static int execute(PrintWriter out, PrintWriter err, String... args) {
        ConsistencyKitCli root = new ConsistencyKitCli();
        CommandLine cli = new CommandLine(root);
        cli.setOut(out);
        cli.setErr(err);
        boolean[] errorPrinted = {false};
        cli.setParameterExceptionHandler((e, arguments) -> {
            CommandLine failed = e.getCommandLine();
            err.println("consistency-kit: " + e.getMessage());
            if (!CommandLine.UnmatchedArgumentException.printSuggestions(e, err)) {
                failed.usage(err);
            }
            if (Arrays.asList(arguments).contains("--json")) {
                out.println(errorLine(e.getMessage(), ExitCodes.USAGE));
                errorPrinted[0] = true;
            }
            return ExitCodes.USAGE;
        });
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            int code = exitCode(e);
            String message = message(e, code);
            commandLine.getErr().println("consistency-kit: " + message);
            if (System.getenv("CONSISTENCY_KIT_DEBUG") != null) {
                e.printStackTrace(commandLine.getErr());   // for whoever debugs the CLI itself; may hold a URI
            }
            if (isJson(commandLine)) {
                commandLine.getOut().println(errorLine(message, code));
                errorPrinted[0] = true;
            }
            return code;
        });
        int code = cli.execute(args);
        if (code != ExitCodes.OK && !errorPrinted[0] && !root.outcomeInReport
                && Arrays.asList(args).contains("--json")) {
            out.println(errorLine(code == ExitCodes.INTERRUPTED ? "interrupted"
                    : "the command found problems (exit code " + code + ")", code));
        }
        out.flush();
        return code;
    }

    private static boolean isJson(CommandLine commandLine) {
        return commandLine.getCommandSpec().root().userObject() instanceof ConsistencyKitCli root && root.json;
    }

    static String errorLine(String message, int exitCode) {
        return Json.line(new Document("error", message).append("exitCode", exitCode));
    }

    private static int exitCode(Exception e) {
        if (interrupted(e)) {
            return ExitCodes.INTERRUPTED;
        }
        if (e instanceof ServerUnreachableException) {
            return ExitCodes.SERVER_UNREACHABLE;
        }
        if (e instanceof IllegalArgumentException) {
            return ExitCodes.USAGE;   // a value the options' own checks could not see (a URI, a database name)
        }
        return ExitCodes.FAILED;
    }

    private static boolean interrupted(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof InterruptedException || t instanceof OperationInterruptedException
                    || t instanceof MongoInterruptedException) {
                return true;
            }
        }
        return Interruption.requested();
    }

    /** One line, without a stack trace or a credential; the exception's type only where it explains something. */
    private static String message(Exception e, int code) {
        if (code == ExitCodes.INTERRUPTED) {
            return "interrupted";
        }
        String text = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        if (!(e instanceof ServerUnreachableException || e instanceof CommandFailedException
                || e instanceof IllegalArgumentException || e instanceof ConsistencyException)) {
            text = e.getClass().getSimpleName() + ": " + text;
        }
        return MongoTarget.redactAll(text.lines().findFirst().orElse(text));
    }

    /** Entry point: exits with the command's code, or with 130 when SIGINT or SIGTERM stopped it. */
    public static void main(String[] args) {
        // UTF-8 whatever the platform: the narration and the JSON lines carry names in any script
        PrintWriter out = new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), true);
        PrintWriter err = new PrintWriter(new OutputStreamWriter(System.err, StandardCharsets.UTF_8), true);
        Interruption.install(Thread.currentThread(), () -> {
            out.flush();
            err.flush();
        });
        int code = execute(out, err, args);
        out.flush();
        err.flush();
        Interruption.exit(code);
    }
}
