package dev.consistencykit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * {@code dashboard} as an operator starts it: it prints the page's address (with the token only when actions are on),
 * serves until interrupted (exit 130), refuses a database that does not exist, a demo over data and a port in use.
 */
@ExtendWith(MongoTestExtension.class)
class DashboardCommandTest {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private static String uri() {
        return MongoTarget.fromEnvironment().connectionString().getConnectionString();
    }

    /** The command running in a thread of its own, until the test interrupts it. */
    private record Running(CompletableFuture<Integer> exit, Thread thread, Output out) {

        /** The JSON line the command prints once it listens: awaited, as a latch is. */
        Document json() throws Exception {
            return Document.parse(out.listening().get(60, TimeUnit.SECONDS));
        }

        int stop() throws Exception {
            thread.interrupt();
            return exit.get(60, TimeUnit.SECONDS);
        }
    }

    /** The command's standard output, which completes {@link #listening()} with the line that says where it serves. */
    private static final class Output extends StringWriter {
        private final CompletableFuture<String> listening = new CompletableFuture<>();

        CompletableFuture<String> listening() {
            return listening;
        }

        @Override
        public void flush() {
            super.flush();
            toString().lines().filter(line -> line.startsWith("{\"url\"")).findFirst().ifPresent(listening::complete);
        }
    }

    private static Running start(String... args) {
        Output out = new Output();
        CompletableFuture<Thread> started = new CompletableFuture<>();
        CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> {
            started.complete(Thread.currentThread());
            return ConsistencyKitCli.execute(new PrintWriter(out, true), new PrintWriter(new StringWriter(), true),
                    args);
        });
        return new Running(exit, started.join(), out);
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return HTTP.send(request.timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void shouldShowTheDemosCrashedOperationsInterruptedFromTheFirstPoll(MongoDatabase db) throws Exception {
        Running demo = start("--uri", uri(), "--json", "dashboard", "--database", db.getName() + "_demo", "--demo",
                "--port", "0");
        try {
            URI page = URI.create(demo.json().getString("url"));
            Document overview = Document.parse(send(HttpRequest.newBuilder(page.resolve("api/overview")).GET()).body());
            assertThat(overview.get("staleAfterSeconds", Number.class).doubleValue()).isZero();
            long interrupted = overview.getList("instances", Document.class).stream()
                    .mapToLong(i -> i.get("interrupted", Number.class).longValue()).sum();
            assertThat(interrupted).as(overview.toJson()).isGreaterThanOrEqualTo(5);
        } finally {
            assertThat(demo.stop()).isEqualTo(ExitCodes.INTERRUPTED);
            MongoTarget.fromEnvironment().client().getDatabase(db.getName() + "_demo").drop();
        }
    }

    @Test
    void shouldServeReadOnlyWithoutActionsAndRecoverWithTheTokenItPrinted(MongoDatabase db) throws Exception {
        InspectRecoverCommandTest.interruptEveryPattern(db);
        Running readOnly = start("--uri", uri(), "--json", "dashboard", "--database", db.getName(), "--port", "0");
        Document first = readOnly.json();
        assertThat(first.get("token")).isNull();
        assertThat(readOnly.out().toString()).contains("(read-only; --actions").doesNotContain("#token=");
        URI page = URI.create(first.getString("url"));
        assertThat(send(HttpRequest.newBuilder(page.resolve("api/instances/two-phase/two-phase/recover"))
                .POST(HttpRequest.BodyPublishers.noBody())).statusCode()).isEqualTo(403);
        assertThat(readOnly.stop()).isEqualTo(ExitCodes.INTERRUPTED);
        List<String> lines = readOnly.out().toString().lines().toList();
        assertThat(lines).contains("dashboard stopped");
        assertThat(Document.parse(lines.get(lines.size() - 1)).getInteger("exitCode")).as("--json: the last line")
                .isEqualTo(ExitCodes.INTERRUPTED);

        Running actions = start("--uri", uri(), "--json", "dashboard", "--database", db.getName(), "--port", "0",
                "--actions", "--stale-after", "0");
        Document second = actions.json();
        String token = second.getString("token");
        assertThat(token).hasSizeGreaterThanOrEqualTo(16);
        assertThat(actions.out().toString()).contains(second.getString("url") + "#token=" + token);
        URI recover = URI.create(second.getString("url")).resolve("api/instances/two-phase/two-phase/recover");
        assertThat(send(HttpRequest.newBuilder(recover).POST(HttpRequest.BodyPublishers.noBody())).statusCode())
                .isEqualTo(401);
        HttpResponse<String> done = send(HttpRequest.newBuilder(recover).header("X-Consistency-Kit-Token", token)
                .POST(HttpRequest.BodyPublishers.noBody()));
        assertThat(done.statusCode()).isEqualTo(200);
        assertThat(Document.parse(done.body()).getInteger("examined")).isEqualTo(1);
        assertThat(done.body()).doesNotContain(token);
        assertThat(actions.stop()).isEqualTo(ExitCodes.INTERRUPTED);
    }

    @Test
    void shouldRefuseAMissingDatabaseADemoOverDataAndAPortInUse(MongoDatabase db) throws Exception {
        db.getCollection("touch").insertOne(new Document("_id", 1));
        CliTestSupport.Run missing = CliTestSupport.run("--uri", uri(), "dashboard", "--database",
                db.getName() + "x", "--port", "0");
        CliTestSupport.Run demo = CliTestSupport.run("--uri", uri(), "dashboard", "--database", db.getName(),
                "--demo", "--port", "0");
        CliTestSupport.Run port;
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = CliTestSupport.run("--uri", uri(), "dashboard", "--database", db.getName(), "--port",
                    String.valueOf(taken.getLocalPort()));
        }
        CliTestSupport.Run bind = CliTestSupport.run("--uri", uri(), "dashboard", "--database", db.getName(),
                "--bind", "no-such-host.invalid");

        assertThat(missing.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(missing.err()).contains("does not exist");
        assertThat(demo.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(demo.err()).contains("--demo fills an empty database only");
        assertThat(db.getCollection("transactions").countDocuments()).as("the demo wrote nothing").isZero();
        assertThat(port.exitCode()).isEqualTo(ExitCodes.FAILED);
        assertThat(port.err()).contains("cannot listen on");
        assertThat(bind.exitCode()).isEqualTo(ExitCodes.USAGE);
    }
}
