package dev.consistencykit.cli.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * An interrupted comparison (Ctrl-C, SIGTERM: the CLI's hook interrupts the command's thread) keeps the rows it
 * finished, drops the database of the one it stopped, and says so; the report shows them.
 */
@ExtendWith(MongoTestExtension.class)
class ComparisonInterruptionTest {

    @Test
    void shouldKeepTheFinishedRowsWhenInterrupted(MongoTarget target) {
        Thread caller = Thread.currentThread();
        Comparison.Settings settings = new Comparison.Settings(Duration.ofSeconds(1), 2, 1, 0.02, 7);

        Comparison.Result result = Comparison.run(target, settings, step -> {
            if (step.contains("] 2/")) {
                caller.interrupt();   // as the second contender starts, after the first finished
            }
        });

        assertThat(Thread.currentThread().isInterrupted()).as("the result carries it; the flag is clear").isFalse();
        assertThat(result.interrupted()).isTrue();
        assertThat(result.entries()).hasSize(2);
        assertThat(result.entries().get(0).name()).isEqualTo("naive (two plain updates)");
        assertThat(result.contenders()).isEqualTo(8);
        assertThat(target.client().listDatabaseNames().into(new java.util.ArrayList<>()))
                .noneMatch(n -> n.startsWith("ck_compare_"));
        String html = CompareReport.html(result, "consistency-kit compare (test)");
        assertThat(html).contains("Interrupted: 2 of 8 patterns finished");
    }
}
