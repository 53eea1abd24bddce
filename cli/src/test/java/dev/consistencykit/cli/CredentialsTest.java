package dev.consistencykit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;

import com.mongodb.ServerAddress;

import dev.consistencykit.testkit.MongoTarget;

/**
 * Every CLI command run with a connection string that carries a password: the password appears nowhere, not on
 * stdout, not on stderr (the commands' own messages and every log line, the driver's included), not on the command
 * line of any process the command starts.
 */
class CredentialsTest {

    private static final String PASSWORD = "s3cretPW";

    private static String credentialedUri() {
        ServerAddress address = MongoTarget.fromEnvironment().connectionString().getHosts().stream()
                .map(ServerAddress::new).findFirst().orElseThrow();
        return "mongodb://alice:" + PASSWORD + "@" + address.getHost() + ":" + address.getPort()
                + "/?serverSelectionTimeoutMS=3000&connectTimeoutMS=3000";
    }

    private static final List<List<String>> COMMANDS = List.of(
            List.of("verify-server"),
            List.of("tour"),
            List.of("inspect"),
            List.of("recover"),
            List.of("bench", "two-phase", "--seconds", "1"),
            List.of("chaos", "two-phase", "--seeds", "1"),
            List.of("compare", "--seconds", "1"),
            List.of("soak", "--seconds", "1"));

    @Test
    void shouldNeverShowThePasswordOfAConnectionString() throws Exception {
        String uri = credentialedUri();
        List<String> leaks = new ArrayList<>();
        for (boolean json : List.of(false, true)) {
            for (List<String> command : COMMANDS) {
                List<String> args = new ArrayList<>();
                if (json) {
                    args.add("--json");
                }
                args.addAll(List.of("--uri", uri));
                args.addAll(command);
                Captured captured = runCapturingEverything(args);
                if (captured.all().contains(PASSWORD)) {
                    leaks.add(args.subList(args.indexOf(uri) + 1, args.size()) + " printed the password: "
                            + excerpt(captured.all()));
                }
                captured.childCommandLines().stream().filter(line -> line.contains(PASSWORD))
                        .forEach(line -> leaks.add(command + " started a process with the password on its command"
                                + " line"));
            }
        }

        assertThat(leaks).isEmpty();
    }

    private record Captured(String out, String err, String systemOut, String systemErr,
                            List<String> childCommandLines) {

        String all() {
            return out + err + systemOut + systemErr;
        }
    }

    /** Runs the CLI in this JVM, capturing its writers, System.out/err (log lines) and its children's command lines. */
    private static Captured runCapturingEverything(List<String> args) throws InterruptedException {
        PrintStream stdout = System.out;
        PrintStream stderr = System.err;
        ByteArrayOutputStream systemOut = new ByteArrayOutputStream();
        ByteArrayOutputStream systemErr = new ByteArrayOutputStream();
        ConcurrentLinkedQueue<String> children = new ConcurrentLinkedQueue<>();
        AtomicBoolean running = new AtomicBoolean(true);
        Thread watcher = new Thread(() -> {
            while (running.get()) {
                ProcessHandle.current().descendants().forEach(p -> p.info().commandLine()
                        .or(() -> p.info().arguments().map(a -> String.join(" ", a))).ifPresent(children::add));
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));   // polling ps, not timing anything
            }
        }, "child-watcher");
        CliTestSupport.Run run;
        try {
            System.setOut(new PrintStream(systemOut, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(systemErr, true, StandardCharsets.UTF_8));
            watcher.start();
            run = CliTestSupport.run(args.toArray(String[]::new));
        } finally {
            running.set(false);
            System.setOut(stdout);
            System.setErr(stderr);
        }
        watcher.join();
        return new Captured(run.out(), run.err(), systemOut.toString(StandardCharsets.UTF_8),
                systemErr.toString(StandardCharsets.UTF_8), List.copyOf(children));
    }

    private static String excerpt(String text) {
        int at = text.indexOf(PASSWORD);
        return Optional.of(text.substring(Math.max(0, at - 120), Math.min(text.length(), at + 40)))
                .map(s -> s.replace('\n', ' ')).get();
    }
}
