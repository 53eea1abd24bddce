package dev.consistencykit.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.bson.Document;
import org.junit.jupiter.api.Test;

import dev.consistencykit.testkit.MongoTarget;

class TourCommandTest {

    @Test
    void shouldRunEveryPatternsExampleWithItsCrashAndRecovery() {
        CliTestSupport.Run run = CliTestSupport.run("--uri",
                MongoTarget.fromEnvironment().connectionString().getConnectionString(), "--json", "tour");

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        Document json = run.lastLineJson();
        assertThat(json.getInteger("examples")).isEqualTo(5);
        assertThat(json.getInteger("problems")).isZero();
        assertThat(json.getList("results", Document.class)).extracting(d -> d.getString("pattern"))
                .containsExactly("sync-flag", "job-queue", "two-phase", "log-reconciliation", "versioning");
        assertThat(run.out()).contains("a reader sees:").contains("injected crash").contains("a fresh process")
                .contains("All 5 patterns stayed consistent through their crash.");
    }
}
