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

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;

import dev.consistencykit.embedded.EmbeddedMongo;

/**
 * Bad input on the command line: every case exits non-zero with a message naming the option or parameter, and no
 * database appears on the server (nothing was written). Each case gets a server of its own, an embedded one, so that
 * the databases other modules' tests create and drop on a shared server meanwhile (CI runs two modules at a time)
 * cannot be taken for the command's, or hide them; the refusals come before any server is asked.
 */
class BadCliInputTest {

    private record Case(String name, String named, List<String> args) {

        Case(String name, String named, String... args) {
            this(name, named, List.of(args));
        }
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
            try (EmbeddedMongo server = EmbeddedMongo.start();
                 MongoClient client = MongoClients.create(server.connectionString())) {
                Set<String> before = databases(client);
                List<String> args = new ArrayList<>(List.of("--uri", server.connectionString()));
                args.addAll(c.args());

                CliTestSupport.Run run = CliTestSupport.run(args.toArray(String[]::new));

                assertThat(run.exitCode()).as(c.name() + ": " + run.err()).isNotZero();
                assertThat(run.out() + run.err()).as(c.name()).contains(c.named());
                assertThat(databases(client)).as(c.name() + ": no database created").isEqualTo(before);
            }
        }));
    }

    @Test
    void shouldRefuseAMalformedUriWithoutEchoingItsPassword() {
        CliTestSupport.Run run = CliTestSupport.run("--uri", "mongodb://alice:s3cret/PW@[bad", "verify-server");

        assertThat(run.exitCode()).isNotZero();
        assertThat(run.out() + run.err()).contains("URI").doesNotContain("s3cret").doesNotContain("PW@");
    }

    private static Set<String> databases(MongoClient client) {
        return client.listDatabaseNames().into(new TreeSet<>());
    }
}
