package dev.consistencykit.cli.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * Every pattern's benchmark, in each of its variants, reports the commands of its steady operation however little ran
 * before the measured phase: each is run here with no warm-up at all, the limit of a slow or busy machine, whose
 * warm-up makes few operations. A one-time cost of the lab's data (a sync-flag master's first update reads its copies'
 * versions, a ledger account's first append reads its head) or of its instance (the first look at the server's clock)
 * left to the warm-up shows up as extra commands here, and on a busy CI machine as a figure that differs from run to
 * run.
 */
@ExtendWith(MongoTestExtension.class)
class BenchSteadyStateTest {

    /**
     * The commands of one benchmarked operation, as docs/patterns/ and docs/ordering-keys.md give them: from
     * {@code least} to {@code most}, plus, where the pattern releases its records in batches, one write per 64
     * operations, and the {@code perHundred} commands one operation in 100 adds (a join that moves a key's entries
     * into a chunk), counted for each hundred begun: a loaded machine runs few operations in the test's second, and
     * one such join among 48 adds more than its share of 100.
     */
    record Steady(String pattern, String variant, double least, double most, boolean batchedReleases,
                  int perHundred) {

        Steady(String pattern, String variant, double least, double most, boolean batchedReleases) {
            this(pattern, variant, least, most, batchedReleases, 0);
        }

        @Override
        public String toString() {
            return variant.isEmpty() ? pattern : pattern + " --variant " + variant;
        }
    }

    private static final List<Steady> STEADY = List.of(
            new Steady("sync-flag", "", 3, 3, false),
            new Steady("job-queue", "apply", 3, 3, true),
            // an enqueue onto an empty line (5) or behind one job (4), taken in turn
            new Steady("job-queue", "keyed", 4.5, 4.5, true),
            // behind the backlog; one join in 100 also moves the key's entries into a chunk: its failed join, the
            // two reads of the line, the chunk's insert, the key document's update and the join again
            new Steady("job-queue", "backlog", 3, 3.1, true, 6),
            new Steady("two-phase", "", 7, 7, true),
            new Steady("log-reconciliation", "query", 1, 1, true),
            new Steady("log-reconciliation", "counter", 3, 3, true),
            new Steady("versioning", "", 3, 3, false));

    static Stream<Steady> steady() {
        return STEADY.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("steady")
    void shouldCountTheSteadyOperationsCommandsWithoutAWarmUp(Steady steady, MongoTarget target) {
        PatternLab lab = Labs.find(steady.pattern()).orElseThrow();

        BenchReport report = lab.bench(target, new Bench.Settings(1, Duration.ofSeconds(1), steady.variant(), false,
                false, Duration.ZERO), line -> { });

        assertThat(report.operations()).isPositive();
        double slack = steady.batchedReleases() ? 1.0 / 64 + 2.0 / report.operations() + 0.0005 : 0;
        double most = Math.max(steady.most(), steady.least()
                + steady.perHundred() * (report.operations() / 100 + 1) / (double) report.operations());
        assertThat(report.roundTripsPerOp()).as(steady.toString()).isBetween(steady.least(), most + slack);
    }

    @Test
    void shouldKnowTheSteadyCommandsOfEveryLabsEveryVariant() {
        List<String> benchmarked = Labs.all().stream().flatMap(lab -> lab.variants().isEmpty()
                ? Stream.of(lab.pattern()) : lab.variants().stream().map(v -> lab.pattern() + " --variant " + v))
                .toList();

        assertThat(STEADY.stream().map(Steady::toString).toList()).containsExactlyInAnyOrderElementsOf(benchmarked);
    }
}
