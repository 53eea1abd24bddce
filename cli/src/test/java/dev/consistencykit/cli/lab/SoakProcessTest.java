package dev.consistencykit.cli.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.consistencykit.testkit.MongoTarget;

/** A soak's child processes get the connection string in their environment, never on their command line. */
class SoakProcessTest {

    @Test
    void shouldKeepTheUriOffEveryChildCommandLine() {
        String uri = "mongodb://alice:s3cretPW@db.example:27017/?authSource=admin";

        ProcessBuilder worker = Soak.processBuilder(List.of("soak-worker", "--database", "d", "--pattern",
                "two-phase", "--seed", "1"), "test-worker", uri);

        assertThat(String.join(" ", worker.command())).doesNotContain("s3cretPW").doesNotContain("alice");
        assertThat(worker.environment()).containsEntry(MongoTarget.URI_ENVIRONMENT, uri);
    }
}
