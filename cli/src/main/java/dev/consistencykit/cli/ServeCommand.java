package dev.consistencykit.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

import org.bson.Document;

import dev.consistencykit.embedded.EmbeddedMongo;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code serve}: runs the embedded server (with the read-atomicity fix) in the foreground until interrupted, so
 * other processes and clients can use it.
 */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Run the embedded MongoDB-compatible server on loopback until interrupted.")
final class ServeCommand implements Callable<Integer> {

    @ParentCommand
    GlobalOptions parent;

    @Spec
    CommandSpec spec;

    @Option(names = "--port", paramLabel = "N", defaultValue = "27017",
            description = "loopback port to listen on, 0 for any free port (default: ${DEFAULT-VALUE})")
    int port;

    @Option(names = "--parent-pid", paramLabel = "PID", hidden = true,
            description = "end when process PID (the soak that started this one) is gone")
    Long parentPid;

    @Override
    public Integer call() throws InterruptedException {
        if (parentPid != null) {
            ParentWatch.start(parentPid);
        }
        if (port < 0 || port > 65_535) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                    "--port must be in [0, 65535], was " + port);
        }
        PrintWriter out = spec.commandLine().getOut();
        EmbeddedMongo server;
        try {
            // one line per client whose connection closes; the server's own log of a reset connection (a stack
            // trace) is switched off in simplelogger.properties
            PrintWriter err = spec.commandLine().getErr();
            server = EmbeddedMongo.start(port, client -> {
                err.println("consistency-kit serve: client " + client + " disconnected");
                err.flush();
            });
        } catch (Exception e) {   // Netty throws its BindException undeclared
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof java.net.BindException) {
                    throw new CommandFailedException("port " + port + " on 127.0.0.1 is already in use: stop what"
                            + " listens there, or choose another with --port (0 picks a free one)", e);
                }
            }
            throw e instanceof RuntimeException r ? r
                    : new CommandFailedException("the server did not start: " + e, e);
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "consistency-kit-serve-stop"));
        if (parent.json()) {
            out.println(Json.line(new Document("connectionString", server.connectionString())
                    .append("port", server.port())));
        } else {
            out.println("Embedded server listening on " + server.connectionString()
                    + " (in memory; Ctrl-C to stop)");
            out.println("Try: ./consistency-kit --uri " + server.connectionString() + " verify-server");
        }
        out.flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            server.close();
            out.println("embedded server stopped");
            return ExitCodes.INTERRUPTED;
        }
        return ExitCodes.OK;
    }
}
