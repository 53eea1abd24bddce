package dev.consistencykit.logreconciliation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.testkit.InterleavingExplorer;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * {@link Ledger#balances} is the ledger's consistent read of several accounts: paused at every call it makes, while
 * an appender, a committer, an archiver and a committer that archives at once run to completion, the balances it
 * returns still sum to the books' total. The same table with one {@code balance()} per account finds the anomaly the
 * consistent read exists for, so the table can fail.
 */
@ExtendWith(MongoTestExtension.class)
class ConsistentBalancesTest {

    private static final Map<String, Long> OPENING = Books.accounts(3, 100);
    private static final List<String> ACCOUNTS = List.of("a0", "a1", "a2");

    private static Map<String, Long> each(Ledger ledger) {
        Map<String, Long> balances = new LinkedHashMap<>();
        ACCOUNTS.forEach(a -> balances.put(a, ledger.balance(a)));
        return balances;
    }

    /**
     * The read runs as the operation; each actor runs to completion at one pause of it. What the read returns must be
     * the balances as they were before that actor ran or after it (each read on its own while nothing moved): a
     * transaction counted entirely or not at all, per account, not only a conserved sum.
     */
    private static InterleavingExplorer.Builder table(MongoTarget target, SeqAllocation allocation,
                                                      Function<Ledger, Map<String, Long>> read) {
        Map<String, Map<String, Long>> returned = new ConcurrentHashMap<>();
        Map<String, Map<String, Long>> before = new ConcurrentHashMap<>();
        Map<String, Map<String, Long>> after = new ConcurrentHashMap<>();
        Function<String, Function<MongoDatabase, List<String>>> recordAfter = name -> db -> {
            after.put(db.getName(), each(Books.ledger(db).seqAllocation(allocation).build()));
            return List.of();
        };
        InterleavingExplorer.Builder table = InterleavingExplorer.builder(target)
                .name("balances-" + allocation)
                .workload(BooksWorkload.transfers(OPENING).allocation(allocation)
                        .alsoSeeding(db -> {
                            Ledger ledger = Books.ledger(db).seqAllocation(allocation).build();
                            ledger.apply(LedgerTransaction.transfer("a1", "a0", 5));
                            ledger.append(LedgerTransaction.transfer("a0", "a2", 7));   // appended, not committed
                            before.put(db.getName(), each(ledger));
                        })
                        .operation((db, ledger, random) -> returned.put(db.getName(), read.apply(ledger)))
                        .alsoChecking(db -> {
                            List<String> problems = new ArrayList<>();
                            Map<String, Long> got = returned.remove(db.getName());
                            Map<String, Long> was = before.remove(db.getName());
                            Map<String, Long> became = after.remove(db.getName());
                            if (got == null || !(got.equals(was) || got.equals(became))) {
                                problems.add("the reader got " + got + ", the books said " + was
                                        + " before the actor and " + became + " after it");
                            }
                            if (got != null && got.values().stream().mapToLong(Long::longValue).sum() != 300) {
                                problems.add("the reader's balances summed to " + got.values().stream()
                                        .mapToLong(Long::longValue).sum() + " with 300 in the books");
                            }
                            return problems;
                        }));
        Map<String, java.util.function.Consumer<Ledger>> actors = new LinkedHashMap<>();
        actors.put("appender", ledger -> ledger.append(LedgerTransaction.transfer("a0", "a1", 3)));
        actors.put("committer", ledger -> ledger.recover(Duration.ZERO));   // commits even what was just appended
        actors.put("archiver", ledger -> ledger.archive(Duration.ZERO));
        actors.put("committer and archiver", ledger -> {
            ledger.recover(Duration.ZERO);
            ledger.archive(Duration.ZERO);
        });
        actors.put("appender, committer and archiver", ledger -> {
            ledger.append(LedgerTransaction.transfer("a2", "a1", 11));
            ledger.recover(Duration.ZERO);
            ledger.archive(Duration.ZERO);
        });
        actors.forEach((name, actor) -> table.actor(name, db -> {
            actor.accept(Books.ledger(db).seqAllocation(allocation).build());
            return recordAfter.apply(name).apply(db);
        }));
        return table;
    }

    private static Map<String, Long> consistent(Ledger ledger) {
        return ledger.balances(ACCOUNTS);
    }

    @Test
    void shouldSumToTheBooksWhateverRunsAtAnyCallOfTheRead(MongoTarget target) {
        InterleavingExplorer.Report report = table(target, SeqAllocation.QUERY, ConsistentBalancesTest::consistent)
                .build().explore();

        assertThat(report.schedules()).isGreaterThanOrEqualTo(3 * 2 * 5);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldSumToTheBooksWithCounterNumbers(MongoTarget target) {
        InterleavingExplorer.Report report = table(target, SeqAllocation.COUNTER, ConsistentBalancesTest::consistent)
                .build().explore();

        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldFindTheAnomalyWhenEachBalanceIsReadOnItsOwn(MongoTarget target) {
        InterleavingExplorer.Report report = table(target, SeqAllocation.QUERY, ConsistentBalancesTest::each)
                .build().explore();

        assertThat(report.violations()).anyMatch(v -> v.contains("summed to"));
    }

    @Test
    void shouldReturnEachAccountOnceInTheOrderGiven(MongoDatabase db) {
        Books.seed(db, OPENING);
        Ledger ledger = Books.ledger(db).build();
        ledger.ensureIndexes();
        ledger.append(LedgerTransaction.transfer("a2", "a0", 40));

        assertThat(ledger.balances(List.of("a2", "a0", "a2", "nobody")))
                .containsExactly(Map.entry("a2", 60L), Map.entry("a0", 140L), Map.entry("nobody", 0L));
    }

    @Test
    void shouldRefuseNoAccountTooManyAndBadNamesBeforeReading(MongoDatabase db) {
        Ledger ledger = Books.ledger(db).build();

        assertThatThrownBy(() -> ledger.balances(List.of())).isInstanceOf(InvalidInputException.class);
        List<String> tooMany = new ArrayList<>();
        for (int i = 0; i <= Ledger.MAX_BALANCES; i++) {
            tooMany.add("a" + i);
        }
        assertThatThrownBy(() -> ledger.balances(tooMany)).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> ledger.balances(List.of("a0", "$bad"))).isInstanceOf(InvalidInputException.class);
    }
}
