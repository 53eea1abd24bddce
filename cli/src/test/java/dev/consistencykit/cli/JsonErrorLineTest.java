package dev.consistencykit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.stream.Stream;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.consistencykit.embedded.EmbeddedMongo;

/**
 * Every failing command, with {@code --json}, ends its standard output with {@code {"error": ..., "exitCode": N}}
 * where N is its exit code, and prints a one-line reason (no stack trace, no credential) on standard error.
 */
class JsonErrorLineTest {

    /** Nothing listens on port 1 of the loopback interface. */
    private static final String UNREACHABLE = "mongodb://alice:s3cretPW@127.0.0.1:1/shop";

    static Stream<Arguments> failures() {
        return Stream.of(
                Arguments.of(List.of("chaos", "foo"), ExitCodes.USAGE, "unknown pattern 'foo'"),
                Arguments.of(List.of("bench", "two-phase", "--seconds", "0"), ExitCodes.USAGE, "--seconds"),
                Arguments.of(List.of("inspect", "--limit", "0"), ExitCodes.USAGE, "--limit must be >= 1"),
                Arguments.of(List.of("compare", "--crash-rate", "1.5"), ExitCodes.USAGE, "--crash-rate"),
                Arguments.of(List.of("no-such-command"), ExitCodes.USAGE, "no-such-command"),
                Arguments.of(List.of(), ExitCodes.USAGE, "name a command"),
                Arguments.of(List.of("serve", "--port", "70000"), ExitCodes.USAGE, "--port"),
                Arguments.of(List.of("--uri", "mongodb://bob:pw@[bad", "verify-server"), ExitCodes.USAGE,
                        "invalid MongoDB URI"),
                Arguments.of(List.of("--server-timeout", "300ms", "--uri", UNREACHABLE, "verify-server"),
                        ExitCodes.SERVER_UNREACHABLE, "no MongoDB server answered at 127.0.0.1:1 within 300ms"
                                + " (--server-timeout)"),
                Arguments.of(List.of("--server-timeout", "300ms", "--uri", UNREACHABLE, "inspect"),
                        ExitCodes.SERVER_UNREACHABLE, "--server-timeout"),
                Arguments.of(List.of("--server-timeout", "300ms", "--uri", UNREACHABLE, "recover"),
                        ExitCodes.SERVER_UNREACHABLE, "--server-timeout"),
                Arguments.of(List.of("--server-timeout", "300ms", "--uri", UNREACHABLE, "tour"),
                        ExitCodes.SERVER_UNREACHABLE, "--server-timeout"),
                Arguments.of(List.of("--server-timeout", "300ms", "--uri", UNREACHABLE, "bench", "sync-flag"),
                        ExitCodes.SERVER_UNREACHABLE, "--server-timeout"),
                Arguments.of(List.of("--server-timeout", "300ms", "--uri", UNREACHABLE, "chaos", "versioning"),
                        ExitCodes.SERVER_UNREACHABLE, "--server-timeout"),
                Arguments.of(List.of("--server-timeout", "300ms", "--uri", UNREACHABLE, "compare"),
                        ExitCodes.SERVER_UNREACHABLE, "--server-timeout"),
                Arguments.of(List.of("--server-timeout", "soon", "tour"), ExitCodes.USAGE, "'soon' is not a duration"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("failures")
    void shouldEndWithAJsonErrorLineCarryingTheExitCode(List<String> args, int exitCode, String reason) {
        String[] withJson = Stream.concat(Stream.of("--json"), args.stream()).toArray(String[]::new);

        CliTestSupport.Run run = CliTestSupport.run(withJson);

        assertThat(run.exitCode()).as(run.out() + run.err()).isEqualTo(exitCode);
        Document last = run.lastLineJson();
        assertThat(last.keySet()).containsExactly("error", "exitCode");
        assertThat(last.getInteger("exitCode")).isEqualTo(exitCode);
        assertThat(last.getString("error")).contains(reason);
        assertThat(run.err()).startsWith("consistency-kit: ").doesNotContain("\tat ").doesNotContain("Exception:");
        assertThat(run.out() + run.err()).doesNotContain("s3cretPW").doesNotContain("alice:").doesNotContain("bob:");
    }

    @Test
    void shouldNameThePortWhenItIsTaken() {
        try (EmbeddedMongo busy = EmbeddedMongo.start()) {
            CliTestSupport.Run run = CliTestSupport.run("--json", "serve", "--port", Integer.toString(busy.port()));

            assertThat(run.exitCode()).isEqualTo(ExitCodes.FAILED);
            assertThat(run.lastLineJson().getString("error")).contains("port " + busy.port())
                    .contains("already in use").contains("--port");
        }
    }

    @Test
    void shouldSayTheEmbeddedServerHasNoAuthenticationWhenGivenCredentials() {
        try (EmbeddedMongo server = EmbeddedMongo.start()) {
            CliTestSupport.Run run = CliTestSupport.run("--json", "--uri", "mongodb://alice:s3cretPW@127.0.0.1:"
                    + server.port() + "/shop", "verify-server");

            assertThat(run.exitCode()).isEqualTo(ExitCodes.SERVER_UNREACHABLE);
            assertThat(run.lastLineJson().getString("error")).contains("refused the credentials")
                    .contains("the embedded server has no authentication");
            assertThat(run.out() + run.err()).doesNotContain("s3cretPW");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("failures")
    void shouldPrintNoJsonWithoutTheOption(List<String> args, int exitCode, String reason) {
        CliTestSupport.Run run = CliTestSupport.run(args.toArray(String[]::new));

        assertThat(run.exitCode()).isEqualTo(exitCode);
        assertThat(run.out()).doesNotContain("\"exitCode\"");
        assertThat(run.err()).contains(reason);
    }
}
