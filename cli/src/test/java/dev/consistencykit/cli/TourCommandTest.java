package dev.consistencykit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;

import dev.consistencykit.testkit.MongoTarget;

/** The tour as a newcomer reads it: the story, the wire, one example, the outcomes only. */
class TourCommandTest {

    private static CliTestSupport.Run tour(String... args) {
        String[] all = new String[args.length + 3];
        all[0] = "--uri";
        all[1] = MongoTarget.fromEnvironment().connectionString().getConnectionString();
        all[2] = "tour";
        System.arraycopy(args, 0, all, 3, args.length);
        return CliTestSupport.run(all);
    }

    /** The lines of a story that list a write: indented five, then the operation. */
    private static List<String> writes(List<String> lines) {
        return lines.stream().filter(l -> l.matches("^     (wrote )?(insert|update|delete|findAndModify) .*"))
                .toList();
    }

    @Test
    void shouldTellTheStoryInAtMost175LinesWithOneLinePerWriteNoneCutAndNoJson() {
        CliTestSupport.Run story = tour();
        CliTestSupport.Run wire = tour("--wire");

        assertThat(story.exitCode()).as(story.out() + story.err()).isZero();
        List<String> lines = story.lines();
        assertThat(lines).hasSizeLessThanOrEqualTo(175).allMatch(l -> l.length() <= 116);
        assertThat(story.out()).as("no line cut inside a word, no bare count").doesNotContain("+1 more")
                .doesNotContainPattern("\\w…\\n");
        assertThat(story.out()).doesNotContain("\\\"").doesNotContain("{\"").doesNotContain("\u001B[")
                .contains("0. The naive way").contains("a reader sees: alice 75.00, bob 50.00: 125.00 of 150.00")
                .contains("update accounts alice: balance -2500")
                .contains("All 5 patterns stayed consistent through their crash.");
        assertThat(lines.stream().filter(l -> l.startsWith("ok "))).hasSize(6);
        // every write is listed: the story has one line for each command the wire shows
        assertThat(wire.exitCode()).isZero();
        assertThat(writes(lines)).hasSameSizeAs(writes(wire.lines()).stream().filter(l -> l.startsWith("     wrote"))
                .toList()).hasSizeGreaterThan(60);
        assertThat(wire.out()).contains("wrote findAndModify users: query {\"$and\"").contains("\"upsert\": true")
                .contains("the process is gone: injected crash");
    }

    @Test
    void shouldRunOneExampleWhenNamedAndOnlyOutcomesWhenQuiet() {
        CliTestSupport.Run one = tour("two-phase");
        assertThat(one.exitCode()).as(one.out() + one.err()).isZero();
        assertThat(one.out()).contains("Two-phase commit: a bank transfer").doesNotContain("Sync flag")
                .contains("All 1 pattern stayed consistent");

        CliTestSupport.Run quiet = tour("--quiet");
        assertThat(quiet.exitCode()).isZero();
        assertThat(quiet.lines()).hasSize(6).allMatch(l -> l.startsWith("ok "));

        CliTestSupport.Run unknown = tour("nope");
        assertThat(unknown.exitCode()).isEqualTo(2);
        assertThat(unknown.err()).contains("no example for 'nope'");
    }

    @Test
    void shouldEndWithTheResultsAsJson() {
        CliTestSupport.Run run = CliTestSupport.run("--uri",
                MongoTarget.fromEnvironment().connectionString().getConnectionString(), "--json", "tour");

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        Document json = run.lastLineJson();
        assertThat(json.getInteger("examples")).isEqualTo(5);
        assertThat(json.getInteger("problems")).isZero();
        assertThat(json.getList("results", Document.class)).extracting(d -> d.getString("pattern"))
                .containsExactly("naive", "sync-flag", "job-queue", "two-phase", "log-reconciliation", "versioning");
    }

    @Test
    void shouldColourOnATerminalOnlyAndNeverWithNoColor() {
        assertThat(TourCommand.colour(true, null, false)).isTrue();
        assertThat(TourCommand.colour(false, null, false)).as("piped").isFalse();
        assertThat(TourCommand.colour(true, "1", false)).as("NO_COLOR").isFalse();
        assertThat(TourCommand.colour(true, null, true)).as("--json").isFalse();
        java.io.StringWriter coloured = new java.io.StringWriter();
        dev.consistencykit.examples.tour.Narration.to(new java.io.PrintWriter(coloured),
                dev.consistencykit.examples.tour.Narration.Detail.STORY, true).outcome("two-phase", "fine", true);
        assertThat(coloured.toString()).contains("\u001B[").contains("two-phase: fine");
    }
}
