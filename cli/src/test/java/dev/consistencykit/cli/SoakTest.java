package dev.consistencykit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.consistencykit.cli.lab.Soak;
import dev.consistencykit.testkit.MongoTarget;

/**
 * The short kill -9 soak of the normal test run: the server in its own process (unless a real one is configured),
 * one worker process per pattern, SIGKILLed at random moments for 40 seconds and restarted; then recovery and every
 * invariant. {@code ./consistency-kit soak --minutes N} runs longer.
 */
class SoakTest {

    @Test
    void shouldKeepEveryInvariantWhenWorkersAreKilledWithSigkill() throws Exception {
        String uri = MongoTarget.configuredUri().orElse(null);

        Soak.Report report = Soak.run(new Soak.Settings(Duration.ofSeconds(40), 1, 7, uri), step -> { });

        assertThat(report.violations()).isEmpty();
        assertThat(report.kills()).isGreaterThanOrEqualTo(20);
        assertThat(report.operations()).containsKeys(Soak.PATTERNS.toArray(String[]::new));
        // every pattern made progress between the kills; how much depends on the machine (a busy one managed 15
        // two-phase operations in the 40 s), so the counts are not what is checked: the invariants are
        Soak.PATTERNS.forEach(p -> assertThat(report.operations().get(p)).as(p).isPositive());
        assertThat(report.operations().get("job-queue keyed jobs")).isPositive();
        assertThat(report.operations().get("job-queue occurrences")).as("a schedule of every second").isPositive();
    }

    @Test
    void shouldSayWhatItDoesWhileItRuns() {
        CliTestSupport.Run run = CliTestSupport.run("soak", "--seconds", "3");

        // (3 s may be too short for a worker process to start before its first kill: the lines are what is checked)
        assertThat(run.err()).as("the start line: server, database, workers, duration")
                .containsPattern("soak: database \\S*soak_\\S+ on (embedded|mongodb://\\S+), 1 worker process\\(es\\) for each of"
                        + " \\[two-phase, job-queue, log-reconciliation\\], killed and restarted for 3 s")
                .contains("killed with SIGKILL and restarted")
                .contains("workers stopped; recovering every pattern and checking its invariants");
        assertThat(run.out()).startsWith("soak: ");
    }

    @Test
    void shouldRefuseANonPositiveDuration() {
        CliTestSupport.Run run = CliTestSupport.run("soak", "--seconds", "0");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("--minutes/--seconds and --workers must be >= 1");
    }
}
