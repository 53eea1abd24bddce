package dev.consistencykit.logreconciliation;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.InterleavingExplorer;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * The actor table of the ledger, run at every driver call of a transfer applied in the caller's thread: a committer,
 * an archiver, a second owner with the same id, a long-lived process whose heads are cached from before, a reader of
 * each account's feed (no seqId skipped or repeated) and a reader summing every balance while nothing else moves (so
 * the sum must be exact).
 */
@ExtendWith(MongoTestExtension.class)
class InterleavingTest {

    private static final Map<String, Long> OPENING = Books.accounts(3, 100);

    static InterleavingExplorer.Builder table(MongoTarget target, SeqAllocation allocation) {
        // one long-lived process per database, its heads cached before the operation runs
        Map<String, Ledger> cached = new ConcurrentHashMap<>();
        LedgerTransaction transfer = LedgerTransaction.transfer("a0", "a1", 10).withId(OperationId.of("t1"));
        return InterleavingExplorer.builder(target)
                .name("ledger-" + allocation)
                .workload(BooksWorkload.transfers(OPENING).allocation(allocation)
                        .alsoSeeding(db -> {
                            Ledger ledger = Books.ledger(db).seqAllocation(allocation).build();
                            ledger.apply(LedgerTransaction.transfer("a1", "a0", 5));
                            Ledger process = Books.ledger(db).seqAllocation(allocation).build();
                            process.apply(LedgerTransaction.transfer("a0", "a2", 1));
                            cached.put(db.getName(), process);
                        })
                        .operation((db, ledger, random) -> ledger.apply(transfer)))
                .actor("committer", db -> {
                    Books.ledger(db).seqAllocation(allocation).build().recover(Duration.ZERO);
                    return List.of();
                })
                .actor("archiver", db -> {
                    Books.ledger(db).seqAllocation(allocation).build().archive(Duration.ZERO);
                    return List.of();
                })
                .actor("second owner", db -> {
                    Books.ledger(db).seqAllocation(allocation).build().apply(transfer);
                    return List.of();
                })
                .actor("cached process", db -> {
                    cached.get(db.getName()).apply(LedgerTransaction.transfer("a0", "a1", 3));
                    return List.of();
                })
                .actor("feed reader", db -> {
                    List<String> problems = new ArrayList<>();
                    for (String account : OPENING.keySet()) {
                        long expected = 1;
                        for (LedgerEntry e : Books.ledger(db).seqAllocation(allocation).build().cursor(account, 0)
                                .poll(1_000)) {
                            if (e.seqId() != expected++) {
                                problems.add(account + "'s feed skips or repeats: seqId " + e.seqId());
                            }
                        }
                    }
                    return problems;
                })
                .actor("reader", db -> {
                    Ledger ledger = Books.ledger(db).seqAllocation(allocation).build();
                    long sum = 0;
                    for (String account : OPENING.keySet()) {
                        sum += ledger.balance(account);
                    }
                    List<String> problems = new ArrayList<>();
                    if (sum != 300) {
                        problems.add("the balances sum to " + sum + " with 300 in the books");
                    }
                    return problems;
                });
    }

    /**
     * A committer walking into a wait cycle (two transfers whose numbers were reserved from counters in opposite
     * orders), paused at each of its calls while the committer of the other transfer (which moves this one out of the
     * cycle, commits its own and the filler of a number this one left, and leaves this one waiting), a committer of
     * everything, an appender or a reader runs: the walk never records a decision, or reports a state, from numbers
     * the transaction held before it was moved.
     */
    @Test
    void shouldKeepTheBooksWhenAnyActorRunsAtAnyCallOfACommitterBreakingAWaitCycle(MongoTarget target) {
        Map<String, Long> opening = Books.accounts(2, 100);
        InterleavingExplorer.Report report = InterleavingExplorer.builder(target)
                .name("ledger-cycle")
                .workload(BooksWorkload.transfers(opening).allocation(SeqAllocation.COUNTER)
                        .alsoSeeding(db -> {
                            try {
                                Books.waitingForEachOther(db, "a0", "a1");
                            } catch (Exception e) {
                                throw new IllegalStateException(e);
                            }
                        })
                        .operation((db, ledger, random) -> ledger.recoverOne(OperationId.of("a1-to-a0").value(),
                                Duration.ZERO)))
                .actor("other committer", db -> {
                    counter(db).recoverOne(OperationId.of("a0-to-a1").value(), Duration.ZERO);
                    return List.of();
                })
                .actor("committer", db -> {
                    counter(db).recover(Duration.ZERO);
                    return List.of();
                })
                .actor("appender", db -> {
                    counter(db).apply(LedgerTransaction.transfer("a0", "a1", 2));
                    return List.of();
                })
                .actor("reader", db -> {
                    long sum = counter(db).balances(List.of("a0", "a1")).values().stream().mapToLong(Long::longValue)
                            .sum();
                    return sum == 200 ? List.of() : List.of("the balances sum to " + sum + " with 200 in the books");
                })
                .answers(e -> false)   // a committer and an appender always complete: any refusal is a finding
                .build().explore();

        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    /** A ledger numbering from counters whose apply waits at most 100 ms for a number the paused operation left. */
    private static Ledger counter(com.mongodb.client.MongoDatabase db) {
        return Books.ledger(db).seqAllocation(SeqAllocation.COUNTER).staleAfter(Duration.ofMillis(100)).build();
    }

    @Test
    void shouldKeepTheBooksWhenAnyActorRunsAtAnyCallOfATransfer(MongoTarget target) {
        InterleavingExplorer.Report report = table(target, SeqAllocation.QUERY).build().explore();

        assertThat(report.schedules()).isEqualTo(report.calls().size() * 2 * 6);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldKeepTheBooksWhenAnyActorRunsAtAnyCallOfATransferWithCounterNumbers(MongoTarget target) {
        InterleavingExplorer.Report report = table(target, SeqAllocation.COUNTER).build().explore();

        assertThat(report.violations()).as(report.toString()).isEmpty();
    }
}
