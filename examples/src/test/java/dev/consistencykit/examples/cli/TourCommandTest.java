package dev.consistencykit.examples.cli;

import java.util.List;

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
        List<String> narration = run.lines().subList(0, run.lines().size() - 1);
        assertThat(narration).as("wrapped, not cut").allMatch(l -> l.length() <= 120).noneMatch(l -> l.contains("…"));
        // a write is shown whole: its continuation lines carry the rest of the command, brackets balanced
        String enqueue = writeStartingWith(narration, "     wrote update jobs");
        assertThat(enqueue.chars().filter(c -> c == '{').count()).isEqualTo(enqueue.chars().filter(c -> c == '}')
                .count());
        assertThat(enqueue).contains("\"upsert\": true");
        assertThat(run.out()).contains("enqueue \"ann and bob become friends\" (one write: an upsert");
    }

    /** The write whose first line starts with {@code start}, its continuation lines joined. */
    private static String writeStartingWith(List<String> lines, String start) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith(start)) {
                StringBuilder write = new StringBuilder(lines.get(i));
                for (int j = i + 1; j < lines.size() && lines.get(j).startsWith("             "); j++) {
                    write.append(' ').append(lines.get(j).strip());
                }
                return write.toString();
            }
        }
        throw new AssertionError("no line starts with " + start);
    }
}
