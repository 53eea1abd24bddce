package dev.consistencykit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import dev.consistencykit.testkit.MongoTarget;

/**
 * Bad input on the command line: every case exits non-zero with a message naming the option or parameter, and no
 * database appears on the server (nothing was written).
 */
class BadCliInputTest {

    private record Case(String name, String named, List<String> args) {

        Case(String name, String named, String... args) {
            this(name, named, List.of(args));
        }
    }

    private static String uri() {
        return MongoTarget.fromEnvironment().connectionString().getConnectionString();
    }

    private static List<Case> cases() {
        return List.of(
                new Case("chaos of an unknown pattern", "<pattern>", "chaos", "foo"),
                new Case("chaos with no seeds", "--seeds", "chaos", "two-phase", "--seeds", "0"),
                new Case("bench for no time", "--seconds", "bench", "two-phase", "--seconds", "0"),
                new Case("bench with no threads", "--threads", "bench", "two-phase", "--threads", "0"),
                new Case("bench of an unknown pattern", "<pattern>", "bench", "$where"),
                new Case("inspect with no limit", "--limit", "inspect", "--database", "cli_bad_input", "--limit", "0"),
                new Case("inspect of an operator-named database", "--database", "inspect", "--database", "$x"),
                new Case("recover with a negative threshold", "--stale-after", "recover", "--stale-after", "-5s"),
                new Case("recover with a threshold that is not a duration", "--stale-after", "recover",
                        "--stale-after", "soon"),
                new Case("soak with no workers", "--workers", "soak", "--workers", "0"),
                new Case("compare with an impossible crash rate", "--crash-rate", "compare", "--crash-rate", "2"),
                new Case("compare with no writers", "--writers", "compare", "--writers", "0"));
    }

    @TestFactory
    Stream<DynamicTest> shouldRefuseBadOptionsNamingThemAndWritingNothing() {
        return cases().stream().map(c -> DynamicTest.dynamicTest(c.name(), () -> {
            Set<String> before = databases();
            List<String> args = new ArrayList<>(List.of("--uri", uri()));
            args.addAll(c.args());

            CliTestSupport.Run run = CliTestSupport.run(args.toArray(String[]::new));

            assertThat(run.exitCode()).as(c.name() + ": " + run.err()).isNotZero();
            assertThat(run.out() + run.err()).as(c.name()).contains(c.named());
            assertThat(databases()).as(c.name() + ": no database created").isEqualTo(before);
        }));
    }

    @Test
    void shouldRefuseAMalformedUriWithoutEchoingItsPassword() {
        CliTestSupport.Run run = CliTestSupport.run("--uri", "mongodb://alice:s3cret/PW@[bad", "verify-server");

        assertThat(run.exitCode()).isNotZero();
        assertThat(run.out() + run.err()).contains("URI").doesNotContain("s3cret").doesNotContain("PW@");
    }

    private static Set<String> databases() {
        return MongoTarget.fromEnvironment().client().listDatabaseNames().into(new TreeSet<>());
    }
}
