package dev.consistencykit.logreconciliation;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.testkit.ScratchDatabases;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * The ledger as a demanding user runs it ({@link LedgerChaos}), 200 seeds for each way of numbering, two seeds at a
 * time on databases of their own. A failure names its seed; {@code -Dledger.chaos.first=N -Dledger.chaos.seeds=1}
 * runs that one again (the schedule of faults is the seed's; the threads' timing is the machine's).
 */
@ExtendWith(MongoTestExtension.class)
class LedgerChaosTest {

    static final int SEEDS = Integer.getInteger("ledger.chaos.seeds", 200);
    static final long FIRST = Long.getLong("ledger.chaos.first", 1);
    /** Seeds run at once: a run spends much of its time in its processes' slowed calls and apply's waits. */
    private static final int LANES = 2;

    @ParameterizedTest
    @EnumSource(SeqAllocation.class)
    void shouldKeepTheBooksUnderAppendersCancelsRetriesACommitterReadersAndKills(SeqAllocation allocation,
                                                                                 MongoClient client)
            throws Exception {
        LedgerChaos chaos = new LedgerChaos(allocation, 4, 4, 10, 2);
        List<LedgerChaos.Result> results = Collections.synchronizedList(new ArrayList<>());
        AtomicLong next = new AtomicLong(FIRST);
        ExecutorService lanes = Executors.newFixedThreadPool(LANES);
        try (ScratchDatabases pool = new ScratchDatabases(client, "lchaos")) {
            List<Future<?>> running = new ArrayList<>();
            for (int lane = 0; lane < LANES; lane++) {
                running.add(lanes.submit(() -> {
                    for (long seed = next.getAndIncrement(); seed < FIRST + SEEDS; seed = next.getAndIncrement()) {
                        MongoDatabase db = pool.take();
                        results.add(chaos.run(seed, db));
                        pool.give(db);
                    }
                    return null;
                }));
            }
            for (Future<?> lane : running) {
                lane.get();
            }
        } finally {
            lanes.shutdownNow();
        }

        Map<String, Long> counters = new TreeMap<>();
        results.forEach(r -> r.counters().forEach((k, v) -> counters.merge(k, v, Long::sum)));
        System.out.println("ledger chaos, " + allocation + ": " + results.size() + " seeds, "
                + results.stream().mapToInt(LedgerChaos.Result::operations).sum() + " operations, "
                + results.stream().mapToInt(LedgerChaos.Result::crashes).sum() + " processes killed, counters "
                + counters + ", slowest seed " + results.stream().map(LedgerChaos.Result::took)
                .max(Comparator.naturalOrder()).orElse(Duration.ZERO).toMillis() + " ms");
        assertThat(results).hasSize(SEEDS);
        assertThat(results.stream().mapToInt(LedgerChaos.Result::crashes).sum()).as("processes killed").isPositive();
        assertThat(results.stream().filter(r -> !r.problems().isEmpty()).map(LedgerChaos.Result::toString))
                .as(allocation + ": seeds that broke an invariant").isEmpty();
    }
}
