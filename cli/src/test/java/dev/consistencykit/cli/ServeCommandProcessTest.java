package dev.consistencykit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * {@code serve} in its own process, used from this one: the embedded server outlives its clients, as the kill -9
 * tests of later issues need.
 */
class ServeCommandProcessTest {

    @Test
    void shouldServeOtherProcessesUntilStopped() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process server = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                ConsistencyKitCli.class.getName(), "--json", "serve", "--port", "0")
                .start();
        // serve's standard error, line by line, as it comes
        BlockingQueue<String> errLines = new LinkedBlockingQueue<>();
        Thread errReader = new Thread(() -> new BufferedReader(new InputStreamReader(server.getErrorStream(),
                StandardCharsets.UTF_8)).lines().forEach(errLines::add), "serve-stderr");
        errReader.setDaemon(true);
        errReader.start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(),
                StandardCharsets.UTF_8))) {
            String first = out.readLine();
            assertThat(first).as("serve printed its connection string").isNotNull();
            Document started = Document.parse(first);
            String uri = started.getString("connectionString");
            assertThat(uri).startsWith("mongodb://127.0.0.1:");

            CliTestSupport.Run verify = CliTestSupport.run("--uri", uri, "--json", "verify-server");

            assertThat(verify.exitCode()).as(verify.err()).isZero();
            assertThat(verify.lastLineJson().getInteger("failed")).isZero();
            assertThat(verify.lastLineJson().getString("server")).isEqualTo(uri);
            assertThat(server.isAlive()).isTrue();

            // a client that drops its connection (a reset): one line, no stack trace
            URI address = URI.create(uri.replace("mongodb://", "tcp://"));
            String line;
            try (Socket dropped = new Socket(address.getHost(), address.getPort())) {
                dropped.setSoLinger(true, 0);
                line = "consistency-kit serve: client /127.0.0.1:" + dropped.getLocalPort() + " disconnected";
            }
            // the server logs a reset before it closes the channel: everything it printed comes before this line
            List<String> before = new ArrayList<>();
            String next;
            while ((next = errLines.poll(30, TimeUnit.SECONDS)) != null && !next.equals(line)) {
                before.add(next);
            }
            assertThat(next).as("serve's standard error: %s", before).isEqualTo(line);
            assertThat(before).noneMatch(l -> l.contains("Exception") || l.startsWith("\tat "));
        } finally {
            server.destroy();
            assertThat(server.waitFor(30, TimeUnit.SECONDS)).as("serve stops on SIGTERM").isTrue();
        }
    }

    @Test
    void shouldRejectPortOutOfRange() {
        CliTestSupport.Run run = CliTestSupport.run("serve", "--port", "70000");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("--port must be in [0, 65535], was 70000");
        assertThat(List.of(run.out())).isNotNull();
    }
}
