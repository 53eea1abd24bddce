package dev.consistencykit.examples.samples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import io.micrometer.core.instrument.MeterRegistry;

import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * Every code sample the README and docs show is a region of a source file in this package, compiled with the tests
 * and run here against the configured server; the documents must show each region exactly as its source has it
 * (run with {@code -Dsamples.update=true} to rewrite them from the sources).
 */
@ExtendWith(MongoTestExtension.class)
class SamplesTest {

    private static List<Path> documents() throws IOException {
        List<Path> documents = new ArrayList<>();
        documents.add(SampleSources.root().resolve("README.md"));
        documents.add(SampleSources.root().resolve("CHANGELOG.md"));
        Path docs = SampleSources.root().resolve("docs");
        if (Files.isDirectory(docs)) {
            try (Stream<Path> files = Files.walk(docs)) {
                files.filter(f -> f.toString().endsWith(".md")).sorted().forEach(documents::add);
            }
        }
        return documents;
    }

    @Test
    void shouldShowEverySampleExactlyAsItsSourceHasIt() throws IOException {
        Map<String, String> samples = SampleSources.rendered();
        List<String> problems = new ArrayList<>();
        List<String> shownAnywhere = new ArrayList<>();
        for (Path document : documents()) {
            String text = SampleSources.read(document);
            if (Boolean.getBoolean("samples.update")) {
                Files.writeString(document, SampleSources.updated(text, samples));
                text = SampleSources.read(document);
            }
            Map<String, String> shown = SampleSources.shownIn(text);
            String name = SampleSources.root().relativize(document).toString();
            if (shown.size() != SampleSources.javaBlocks(text)) {
                problems.add(name + " has " + SampleSources.javaBlocks(text) + " Java blocks but " + shown.size()
                        + " marked <!-- sample: … -->: every Java block must be a compiled sample");
            }
            shown.forEach((key, code) -> {
                shownAnywhere.add(key);
                if (!samples.containsKey(key)) {
                    problems.add(name + " shows sample " + key + ", which no source in the samples package has");
                } else if (!samples.get(key).equals(code)) {
                    problems.add(name + " shows sample " + key + " differently from its source:\n--- shown\n" + code
                            + "--- source\n" + samples.get(key));
                }
            });
        }
        samples.keySet().stream().filter(k -> !shownAnywhere.contains(k))
                .forEach(k -> problems.add("sample " + k + " is shown in no document"));
        assertThat(problems).as("run ./mvnw verify -pl examples -Dtest=SamplesTest -Dsamples.update=true to "
                + "rewrite the documents from the samples").isEmpty();
    }

    /**
     * A properties sample is copied into {@code application.properties} as it is, where a {@code #} after a value is
     * part of the value ({@code workers=4   # threads} is the text "4   # threads"): comments stand on lines of
     * their own.
     */
    @Test
    void shouldShowPropertiesSamplesThatLoadAsTheyRead() throws IOException {
        List<String> problems = new ArrayList<>();
        for (Path document : documents()) {
            String name = SampleSources.root().relativize(document).toString();
            java.util.regex.Matcher block = java.util.regex.Pattern.compile("```properties\\n(.*?)```",
                    java.util.regex.Pattern.DOTALL).matcher(SampleSources.read(document));
            while (block.find()) {
                java.util.Properties loaded = new java.util.Properties();
                loaded.load(new java.io.StringReader(block.group(1)));
                loaded.forEach((key, value) -> {
                    if (value.toString().matches("(?s).*\\s#.*|.*\\s")) {
                        problems.add(name + ": " + key + " would be '" + value + "'");
                    }
                });
            }
        }
        assertThat(problems).isEmpty();
    }

    /** The README is the front page: what it is, the table, the commands, the build, a first program, links. */
    @Test
    void shouldKeepTheReadmeAFrontPage() throws IOException {
        long lines = SampleSources.read(SampleSources.root().resolve("README.md")).lines().count();
        assertThat(lines).as("README.md lines: the rest belongs in docs/").isLessThanOrEqualTo(250);
    }

    /**
     * No fact in two places: no paragraph of prose (80 characters or more, code blocks and tables aside) appears twice
     * across the README and docs, whitespace aside.
     */
    @Test
    void shouldStateEachParagraphOnce() throws IOException {
        Map<String, List<String>> seen = new java.util.HashMap<>();
        for (Path document : documents()) {
            String text = SampleSources.read(document).replaceAll("(?s)```.*?```", "");
            String name = SampleSources.root().relativize(document).toString();
            for (String paragraph : java.util.regex.Pattern.compile("\\n\\s*\\n").splitAsStream(text).toList()) {
                String p = paragraph.strip().replaceAll("\\s+", " ");
                if (p.length() >= 80 && !p.startsWith("|") && !p.startsWith("#")) {
                    seen.computeIfAbsent(p, k -> new ArrayList<>()).add(name);
                }
            }
        }
        List<String> twice = new ArrayList<>();
        seen.forEach((p, where) -> {
            if (where.size() > 1) {
                twice.add(where + ": " + p.substring(0, Math.min(120, p.length())));
            }
        });
        assertThat(twice).as("paragraphs stated twice: keep one, link to it").isEmpty();
    }

    /** A Markdown table renders only under a header row: no separator row ({@code |---|}) without one above it. */
    @Test
    void shouldGiveEveryTableAHeaderRow() throws IOException {
        List<String> headless = new ArrayList<>();
        for (Path document : documents()) {
            List<String> lines = SampleSources.read(document).replaceAll("(?s)```.*?```", "").lines().toList();
            for (int i = 0; i < lines.size(); i++) {
                if (lines.get(i).strip().matches("\\|(\\s*:?-+:?\\s*\\|)+")
                        && (i == 0 || !lines.get(i - 1).strip().startsWith("|"))) {
                    headless.add(SampleSources.root().relativize(document) + ":" + (i + 1));
                }
            }
        }
        assertThat(headless).as("tables without a header row").isEmpty();
    }

    @Test
    void shouldLinkOnlyToFilesThatExist() throws IOException {
        java.util.regex.Pattern link = java.util.regex.Pattern.compile("\\]\\(([^)#\\s]+)(#[^)]*)?\\)");
        List<String> broken = new ArrayList<>();
        for (Path document : documents()) {
            java.util.regex.Matcher m = link.matcher(SampleSources.read(document));
            while (m.find()) {
                String target = m.group(1);
                if (!target.contains("://") && !Files.exists(document.getParent().resolve(target))) {
                    broken.add(SampleSources.root().relativize(document) + " links to " + target);
                }
            }
        }
        assertThat(broken).isEmpty();
    }

    @Test
    void shouldDrawAStateMachineOnEveryPatternPage() throws IOException {
        Path patterns = SampleSources.root().resolve("docs").resolve("patterns");
        for (String pattern : List.of("sync-flag", "job-queue", "two-phase", "log-reconciliation", "versioning")) {
            assertThat(SampleSources.read(patterns.resolve(pattern + ".md"))).as(pattern)
                    .contains("```mermaid\nstateDiagram-v2\n");
        }
    }

    @Test
    void shouldRunTheSyncFlagSample(MongoDatabase db) {
        SyncFlagSample.seed(db);
        SyncFlagSample.run(db);
    }

    @Test
    void shouldRunTheVersioningSample(MongoDatabase db) {
        VersioningSample.seed(db);
        VersioningSample.run(db);
    }

    @Test
    void shouldRunTheLedgerSample(MongoDatabase db) {
        LedgerSample.seed(db);
        LedgerSample.run(db);
    }

    @Test
    void shouldRunTheFirstProgramOnItsOwnEmbeddedServer() {
        assertThat(FirstProgramSample.run(null)).startsWith("COMMITTED [Document{{_id=alice, balance=70")
                .contains("balance=30");
    }

    @Test
    void shouldRunTheTwoPhaseSample(MongoDatabase db) {
        TwoPhaseSample.seed(db);
        TwoPhaseSample.run(db);
    }

    @Test
    void shouldRunTheJobQueueSample(MongoDatabase db) {
        JobQueueSample.seed(db);
        JobQueueSample.run(db);
    }

    @Test
    void shouldRunTheRecurringJobsSample(MongoDatabase db) {
        RecurringJobsSample.run(db);
    }

    @Test
    void shouldRunTheOrderingKeysSample(MongoDatabase db) {
        OrderingKeysSample.run(db);
    }

    @Test
    void shouldRunTheConcurrencyKeysSample(MongoDatabase db) {
        ConcurrencyKeysSample.run(db);
    }

    @Test
    void shouldRunTheCoreHelpersSample(MongoDatabase db) {
        CoreHelpersSample.seed(db);
        CoreHelpersSample.run(db);
    }

    @Test
    void shouldRunTheOperatingSamples(MongoDatabase db) {
        MeterRegistry registry = OperatingSample.run(db);
        assertThat(registry.getMeters()).isNotEmpty();
    }

    @Test
    void shouldRunTheCrashPointSampleWithoutViolations(MongoClient client) {
        assertThat(ExplorationSample.crashPoints(client).violations()).isEmpty();
    }

    @Test
    void shouldRunTheInterleavingSampleWithoutViolations(MongoTarget target) {
        assertThat(ExplorationSample.interleavings(target).violations()).isEmpty();
    }

    @Test
    void shouldRunTheShardingSamplesWhereTheServerCanShard(MongoClient client, MongoTarget target, MongoDatabase db) {
        ExplorationSample.shard(client, db);   // skips itself where the server cannot shard

        assertThat(ExplorationSample.targeting(target, db)).isNotEmpty()
                .allSatisfy(call -> assertThat(call.shards()).as(call.toString()).isNotZero());
    }
}
