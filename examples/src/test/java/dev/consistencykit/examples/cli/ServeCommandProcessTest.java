package dev.consistencykit.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * {@code serve} in its own process, used from this one: the embedded server outlives its clients, as the kill -9
 * tests of later issues need.
 */
class ServeCommandProcessTest {

    private static final Path ERR = Path.of(System.getProperty("java.io.tmpdir"), "consistency-kit-serve-test.err");

    @Test
    void shouldServeOtherProcessesUntilStopped() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process server = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                ConsistencyKitCli.class.getName(), "--json", "serve", "--port", "0")
                .redirectError(ERR.toFile())
                .start();
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
            String log = "";
            for (int i = 0; i < 100 && !log.contains(line); i++) {
                Thread.sleep(100);   // bounded wait for another process's output, not a timing assumption
                log = Files.readString(ERR, StandardCharsets.UTF_8);
            }
            assertThat(log).contains(line);
            assertThat(log).doesNotContain("Exception").doesNotContain("\tat ");
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
