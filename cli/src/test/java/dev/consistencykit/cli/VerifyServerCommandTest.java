package dev.consistencykit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;

import dev.consistencykit.testkit.MongoTarget;

class VerifyServerCommandTest {

    private static String targetUri() {
        return MongoTarget.fromEnvironment().connectionString().getConnectionString();
    }

    @Test
    void shouldPrintOneJsonObjectWithEveryCheckPassingWhenJsonIsAsked() {
        CliTestSupport.Run run = CliTestSupport.run("--uri", targetUri(), "--json", "verify-server");

        assertThat(run.exitCode()).as(run.err()).isZero();
        Document json = run.lastLineJson();
        assertThat(json.getInteger("failed")).isZero();
        assertThat(json.getInteger("checks")).isGreaterThanOrEqualTo(12);
        List<Document> results = json.getList("results", Document.class);
        assertThat(results).hasSize(json.getInteger("checks"))
                .extracting(d -> d.getString("name")).contains("single-document-read-atomicity");
        assertThat(results).allSatisfy(r -> assertThat(r.getBoolean("passed")).isTrue());
        assertThat(json.getString("server")).doesNotContain("@");
    }

    @Test
    void shouldPrintPassLinesAndSummaryWhenHumanOutput() {
        CliTestSupport.Run run = CliTestSupport.run("--uri", targetUri(), "verify-server");

        assertThat(run.exitCode()).isZero();
        assertThat(run.lines()).anyMatch(l -> l.startsWith("PASS single-document-read-atomicity"));
        assertThat(run.lines()).last().asString().matches("\\d+ checks, 0 failed(, 1 not run on this server)?");
    }

    /** The sharding check runs only where a collection can be sharded, and says so where it cannot. */
    @Test
    void shouldSayTheShardingCheckWasNotRunWhereNothingCanBeSharded() {
        java.util.Optional<String> why = dev.consistencykit.testkit.Sharding.of(MongoTarget.fromEnvironment()
                .client()).unavailable();
        org.junit.jupiter.api.Assumptions.assumeTrue(why.isPresent(), "this server can shard");

        CliTestSupport.Run run = CliTestSupport.run("--uri", targetUri(), "--json", "verify-server");

        assertThat(run.exitCode()).isZero();
        Document check = run.lastLineJson().getList("results", Document.class).stream()
                .filter(r -> r.getString("name").equals("unique-index-across-shards")).findFirst().orElseThrow();
        assertThat(check.getBoolean("skipped")).isTrue();
        assertThat(check.getString("detail")).startsWith("not checked: ").contains("no shard command is set");
    }

    @Test
    void shouldFailWithClearMessageWhenUriIsInvalid() {
        CliTestSupport.Run run = CliTestSupport.run("--uri", "not-a-uri", "verify-server");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("consistency-kit:").contains("not-a-uri");
    }

    @Test
    void shouldRedactCredentialsWhenDescribingServer() {
        assertThat(MongoTarget.redact("mongodb://alice:s3cret@db.example:27017/app?tls=true"))
                .isEqualTo("mongodb://db.example:27017/app?tls=true");
        assertThat(MongoTarget.redact("mongodb+srv://u:p@cluster0.example/"))
                .isEqualTo("mongodb+srv://cluster0.example/");
        assertThat(MongoTarget.redact("mongodb://127.0.0.1:27017")).isEqualTo("mongodb://127.0.0.1:27017");
        assertThat(MongoTarget.redact("mongodb://alice:s3c/ret@db.example:27017/app?authSource=admin"))
                .as("a password holding a slash").isEqualTo("mongodb://db.example:27017/app?authSource=admin");
        assertThat(MongoTarget.redact("mongodb://alice:s3c/re@t@db.example/app")).doesNotContain("s3c", "re@t");
    }
}
