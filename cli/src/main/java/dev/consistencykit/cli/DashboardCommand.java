package dev.consistencykit.cli;

import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.dashboard.Dashboard;
import dev.consistencykit.dashboard.DashboardHttpServer;
import dev.consistencykit.dashboard.DashboardSettings;
import dev.consistencykit.cli.lab.DashboardDemo;
import dev.consistencykit.testkit.MongoTarget;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code dashboard}: a live web page of every pattern instance in a database, served on loopback until interrupted.
 * Read-only unless {@code --actions}; then an action needs the token printed at start.
 */
@Command(name = "dashboard", mixinStandardHelpOptions = true,
        description = "Serve a live web page of every pattern instance in a database: unfinished and interrupted"
                + " operations by age, dead jobs with their error, each operation's record and the documents it"
                + " touches, checks, throughput. Read-only unless --actions. Runs until interrupted (Ctrl-C).")
final class DashboardCommand implements Callable<Integer> {

    /** The database {@code --demo} fills when none is named. */
    static final String DEMO_DATABASE = "dashboard-demo";

    @ParentCommand
    GlobalOptions parent;

    @Spec
    CommandSpec spec;

    @Mixin
    OperatorOptions options;

    @Option(names = "--port", paramLabel = "N", defaultValue = "8090",
            description = "port to listen on, 0 for any free port (default: ${DEFAULT-VALUE})")
    int port;

    @Option(names = "--bind", paramLabel = "ADDRESS", defaultValue = "127.0.0.1",
            description = "address to listen on (default: ${DEFAULT-VALUE}, this machine only); any other makes the"
                    + " page reachable from other hosts")
    String bind;

    @Option(names = "--actions",
            description = "let the page recover instances and operations, and replay, discard or delete dead jobs;"
                    + " each action needs the token printed at start")
    boolean actions;

    @Option(names = "--refresh", paramLabel = "DURATION", defaultValue = "2s",
            converter = OperatorOptions.DurationConverter.class,
            description = "how often the page polls (default: ${DEFAULT-VALUE})")
    Duration refresh;

    @Option(names = "--demo",
            description = "first fill an empty database (default " + DEMO_DATABASE + ") with every pattern in every"
                    + " state, crashed operations included (interrupted from the first poll: --stale-after 0 unless"
                    + " given), to look around")
    boolean demo;

    @Override
    public Integer call() {
        if (port < 0 || port > 65_535) {
            throw new ParameterException(spec.commandLine(), "--port must be in [0, 65535], was " + port);
        }
        if (refresh.isZero()) {
            throw new ParameterException(spec.commandLine(), "--refresh must be more than 0");
        }
        InetAddress address;
        try {
            address = InetAddress.getByName(bind);
        } catch (UnknownHostException e) {
            throw new ParameterException(spec.commandLine(), "--bind: no such address " + bind, e);
        }
        PrintWriter out = spec.commandLine().getOut();
        try (MongoTarget target = Target.open(parent)) {
            if (demo && options.database == null && target.connectionString().getDatabase() == null) {
                options.database = DEMO_DATABASE;
            }
            if (demo) {
                MongoDatabase db = target.client().getDatabase(options.databaseName(target));
                if (db.listCollectionNames().first() != null) {
                    throw new ParameterException(spec.commandLine(), "--demo fills an empty database only, and "
                            + db.getName() + " has collections: name another with --database");
                }
                out.printf("filling database %s with the demo: every pattern, with operations left by crashes%n",
                        db.getName());
                DashboardDemo.populate(db);
            }
            OperatorOptions.Scope scope = options.scope(target, out);
            String token = actions ? newToken() : null;
            // the demo's operations were left by crashes and nothing drives them: interrupted from the first poll,
            // unless --stale-after says otherwise
            Duration staleAfter = demo && !spec.commandLine().getParseResult().hasMatchedOption("--stale-after")
                    ? Duration.ZERO : options.staleAfter;
            DashboardSettings settings = new DashboardSettings().actionsEnabled(actions).token(token)
                    .staleAfter(staleAfter).refreshEvery(refresh);
            Dashboard dashboard = Dashboard.of(scope.db(), settings);
            DashboardHttpServer server;
            try {
                server = DashboardHttpServer.start(dashboard, new InetSocketAddress(address, port));
            } catch (UncheckedIOException e) {
                throw new CommandFailedException(e.getMessage() + (port != 0 ? " (--port 0 picks a free port)" : ""),
                        e);
            }
            try (server) {
                String url = server.uri().toString();
                out.printf("dashboard of database %s on %s: %d pattern instance(s) %s%n", scope.name(),
                        target.description(), scope.present().size(), scope.instances());
                if (!address.isLoopbackAddress()) {
                    out.printf("listening on %s: reachable from other hosts (--bind)%n", bind);
                }
                out.println(actions ? "open " + url + "#token=" + token + "  (actions on: the token in this address is"
                        + " the key to them; keep it to yourself)" : "open " + url + "  (read-only; --actions to"
                        + " recover from the page)");
                out.println("Ctrl-C to stop");
                if (parent.json()) {
                    out.println(Json.line(new Document("url", url).append("database", scope.name())
                            .append("actions", actions).append("token", token)));
                }
                out.flush();
                try {
                    new CountDownLatch(1).await();
                } catch (InterruptedException e) {
                    out.println("dashboard stopped");   // with --json, the CLI's last line says exit 130
                    out.flush();
                    return ExitCodes.INTERRUPTED;
                }
            }
        }
        return ExitCodes.OK;
    }

    private static String newToken() {
        byte[] bytes = new byte[24];
        new SecureRandom().nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }
}
