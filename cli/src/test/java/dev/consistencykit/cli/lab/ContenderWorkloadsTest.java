package dev.consistencykit.cli.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import com.mongodb.client.MongoClient;

import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * The comparison's workloads, as {@link Contender#asWorkload()}, run unchanged by the testkit's crash
 * explorer: every pattern keeps its workload's invariants wherever one of its writes crashes (before, after with the
 * reply lost, transient error), and the naive loop does not — the same check the comparison makes, at every write
 * instead of at random.
 */
@ExtendWith(MongoTestExtension.class)
class ContenderWorkloadsTest {

    static Stream<Contender> patterns() {
        return Contenders.all().stream().filter(c -> !c.pattern().equals("naive"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("patterns")
    void shouldKeepTheWorkloadsInvariantsAtEveryCrashPoint(Contender contender, MongoClient client) {
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client).name(contender.name())
                .workload(contender.asWorkload()).build().explore();

        assertThat(report.writeSites()).as(contender.name()).isPositive();
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldCatchTheNaiveLoopLosingMoney(MongoClient client) {
        Contender naive = Contenders.all().stream().filter(c -> c.pattern().equals("naive")).findFirst()
                .orElseThrow();

        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client).name(naive.name())
                .workload(naive.asWorkload()).build().explore();

        assertThat(report.violations()).as(report.toString()).isNotEmpty();
    }
}
