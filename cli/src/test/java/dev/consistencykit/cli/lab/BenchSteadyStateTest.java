package dev.consistencykit.cli.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * Every pattern's benchmark reports the commands of its steady operation however little ran before the measured
 * phase: each is run here with no warm-up at all, the limit of a slow or busy machine, whose warm-up makes few
 * operations. A one-time cost of the lab's data (a sync-flag master's first update reads its copies' versions, a
 * ledger account's first append reads its head) left to the warm-up shows up as extra commands here, and on a busy
 * CI machine as a figure that differs from run to run.
 */
@ExtendWith(MongoTestExtension.class)
class BenchSteadyStateTest {

    /** The commands of each pattern's benchmarked operation, as docs/patterns/ gives them. */
    private static final Map<String, Integer> COMMANDS = Map.of("sync-flag", 3, "job-queue", 3, "two-phase", 7,
            "log-reconciliation", 1, "versioning", 3);

    /** The patterns whose operation sends no batched write besides (a release of records every 64 operations). */
    private static final Set<String> EXACT = Set.of("sync-flag", "versioning");

    static Stream<String> patterns() {
        return Labs.names().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("patterns")
    void shouldCountTheSteadyOperationsCommandsWithoutAWarmUp(String pattern, MongoTarget target) {
        PatternLab lab = Labs.find(pattern).orElseThrow();
        assertThat(COMMANDS).as("the commands of every lab's operation").containsKey(pattern);

        BenchReport report = lab.bench(target, new Bench.Settings(1, Duration.ofSeconds(1), "", false, false,
                Duration.ZERO), line -> { });

        int commands = COMMANDS.get(pattern);
        assertThat(report.operations()).isPositive();
        if (EXACT.contains(pattern)) {
            assertThat(report.roundTripsPerOp()).as(pattern).isEqualTo(commands);
        } else {
            assertThat(report.roundTripsPerOp()).as(pattern).isBetween((double) commands,
                    commands + 1.0 / 64 + 2.0 / report.operations() + 0.0005);
        }
    }
}
