package dev.consistencykit.testkit.junit5;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.DatabaseSnapshot;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.Workload;
import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.core.UnsafeConfigurationException;

/**
 * The behaviours every {@link ConsistencyStrategy} must have, as JUnit 5 tests that each pattern module runs by
 * extending this class (like Micrometer's {@code micrometer-test} kit): idempotent submit and apply for a
 * caller-supplied id, typed rejection of a reused id with another change before any write, recovery on an empty
 * database, idempotent recovery, a staleness threshold that leaves fresh operations alone, {@code status()}
 * consistent with the data, {@code interrupted()} empty once recovered, refusal of {@code w:0}, and recovery after a
 * crash at every write site of {@code apply()} in every fault mode (through the {@link CrashPointExplorer}).
 *
 * <pre>{@code
 * class LedgerCompatibilityTest extends StrategyCompatibilityKit<LedgerTransaction> {
 *
 *     private static final Map<String, Long> OPENING = Books.accounts(3, 1_000);
 *
 *     @Override
 *     protected ConsistencyStrategy<LedgerTransaction> newStrategy(MongoDatabase database) {
 *         return Books.ledger(database).build();
 *     }
 *
 *     @Override
 *     protected void seed(MongoDatabase database) {
 *         Books.seed(database, OPENING);
 *     }
 *
 *     @Override
 *     protected LedgerTransaction change(OperationId id) {
 *         return LedgerTransaction.transfer("a0", "a1", 100).withId(id);
 *     }
 *
 *     @Override
 *     protected LedgerTransaction differentChange(OperationId id) {
 *         return LedgerTransaction.transfer("a0", "a2", 100).withId(id);
 *     }
 *
 *     @Override
 *     protected List<String> invariants(MongoDatabase database) {
 *         return Books.invariants(database, OPENING, true, null);
 *     }
 * }
 * }</pre>
 *
 * @param <C> the strategy's change type
 */
@ExtendWith(MongoTestExtension.class)
public abstract class StrategyCompatibilityKit<C> {

    /** A new instance on {@code database}, as a freshly started process would create it. */
    protected abstract ConsistencyStrategy<C> newStrategy(MongoDatabase database);

    /** Creates the data changes refer to (accounts, masters, roots…). Default: nothing. */
    protected void seed(MongoDatabase database) {
    }

    /** A valid change with id {@code id}; the same id always gives the same change. */
    protected abstract C change(OperationId id);

    /** A valid change with id {@code id} whose payload differs from {@link #change(OperationId)}. */
    protected abstract C differentChange(OperationId id);

    /** The pattern's invariants, read back from {@code database}: one message per violation. */
    protected abstract List<String> invariants(MongoDatabase database);

    /** The fault modes the crash exploration injects. Default: all. */
    protected Set<FaultMode> faultModes() {
        return FaultInjector.allModes();
    }

    private ConsistencyStrategy<C> ready(MongoDatabase database) {
        seed(database);
        ConsistencyStrategy<C> strategy = newStrategy(database);
        strategy.ensureIndexes();
        return strategy;
    }

    @Test
    void shouldReturnSameIdWhenSameChangeSubmittedTwice(MongoDatabase database) {
        ConsistencyStrategy<C> strategy = ready(database);
        OperationId id = OperationId.of("kit-submit-twice");

        OperationId first = strategy.submit(change(id));
        OperationId second = newStrategy(database).submit(change(id));

        assertThat(first).isEqualTo(id);
        assertThat(second).isEqualTo(id);
        assertThat(strategy.status().total()).as("operations recorded").isEqualTo(1);
    }

    @Test
    void shouldRejectReusedIdWithDifferentChangeBeforeAnyWrite(MongoDatabase database) {
        ConsistencyStrategy<C> strategy = ready(database);
        OperationId id = OperationId.of("kit-reused-id");
        strategy.submit(change(id));
        DatabaseSnapshot before = DatabaseSnapshot.of(database);

        assertThatThrownBy(() -> strategy.submit(differentChange(id)))
                .isInstanceOf(IdempotencyConflictException.class)
                .hasMessageContaining(String.valueOf(id.value()));
        assertThatThrownBy(() -> strategy.apply(differentChange(id)))
                .isInstanceOf(IdempotencyConflictException.class);

        assertThat(DatabaseSnapshot.of(database)).isEqualTo(before);
    }

    @Test
    void shouldReturnSameOutcomeWhenSameChangeAppliedTwice(MongoDatabase database) {
        ConsistencyStrategy<C> strategy = ready(database);
        OperationId id = OperationId.of("kit-apply-twice");

        OperationResult first = strategy.apply(change(id));
        DatabaseSnapshot afterFirst = DatabaseSnapshot.of(database);
        OperationResult second = newStrategy(database).apply(change(id));

        assertThat(first.outcome()).isNotEqualTo(OperationResult.Outcome.IN_FLIGHT);
        assertThat(second.outcome()).isEqualTo(first.outcome());
        assertThat(second.state()).isEqualTo(first.state());
        assertThat(invariants(database)).isEmpty();
        assertThat(DatabaseSnapshot.of(database).collections().keySet())
                .isEqualTo(afterFirst.collections().keySet());
    }

    @Test
    void shouldRecoverNothingWhenDatabaseIsEmpty(MongoDatabase database) {
        ConsistencyStrategy<C> strategy = newStrategy(database);
        strategy.ensureIndexes();

        RecoveryReport report = strategy.recover(Duration.ZERO);

        assertThat(report.examined()).isZero();
        assertThat(report.isEmpty()).isTrue();
        assertThat(strategy.status().inFlight()).isZero();
    }

    @Test
    void shouldFinishSubmittedOperationsOnceWhenRecoveredTwice(MongoDatabase database) {
        ConsistencyStrategy<C> strategy = ready(database);
        strategy.submit(change(OperationId.of("kit-recover-1")));
        strategy.submit(change(OperationId.of("kit-recover-2")));

        RecoveryReport first = newStrategy(database).recover(Duration.ZERO);
        DatabaseSnapshot afterFirst = DatabaseSnapshot.of(database);
        RecoveryReport second = newStrategy(database).recover(Duration.ZERO);

        assertThat(first.repaired()).isEqualTo(2);
        assertThat(second.repaired()).isZero();
        assertThat(strategy.status().inFlight()).isZero();
        assertThat(invariants(database)).isEmpty();
        assertThat(snapshotWithoutTimestamps(database)).isEqualTo(withoutTimestamps(afterFirst));
    }

    @Test
    void shouldLeaveFreshOperationsAloneWhenRecoveringWithLongThreshold(MongoDatabase database) {
        ConsistencyStrategy<C> strategy = ready(database);
        strategy.submit(change(OperationId.of("kit-fresh")));

        RecoveryReport report = newStrategy(database).recover(Duration.ofHours(1));

        assertThat(report.repaired()).isZero();
        assertThat(strategy.status().inFlight()).isEqualTo(1);
    }

    @Test
    void shouldReportStatusConsistentWithData(MongoDatabase database) {
        ConsistencyStrategy<C> strategy = ready(database);
        for (int i = 0; i < 3; i++) {
            strategy.submit(change(OperationId.of("kit-status-" + i)));
        }

        StrategyStatus pending = strategy.status();
        assertThat(pending.inFlight()).isEqualTo(3);
        assertThat(pending.total()).isEqualTo(3);
        assertThat(pending.oldestInFlightAge()).isPresent();
        assertThat(pending.instanceName()).isEqualTo(strategy.name());

        strategy.recover(Duration.ZERO);
        StrategyStatus settled = strategy.status();
        assertThat(settled.inFlight()).isZero();
        assertThat(settled.total()).isEqualTo(3);
        assertThat(settled.oldestInFlightAge()).isEmpty();
    }

    @Test
    void shouldListNoInterruptedOperationOnAnEmptyDatabaseOrAfterRecovery(MongoDatabase database) {
        ConsistencyStrategy<C> strategy = newStrategy(database);
        strategy.ensureIndexes();
        assertThat(strategy.interrupted(Duration.ZERO, 10)).isEmpty();
        seed(database);
        strategy.submit(change(OperationId.of("kit-interrupted")));

        newStrategy(database).recover(Duration.ZERO);

        assertThat(strategy.interrupted(Duration.ZERO, 10)).isEmpty();
        assertThat(strategy.interrupted(Duration.ofHours(1), 10)).isEmpty();
        assertThatThrownBy(() -> strategy.interrupted(Duration.ofSeconds(-1), 10))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> strategy.interrupted(Duration.ZERO, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * An operator repairs one operation he looked at: {@code recoverOne} takes over exactly that one (the others stay
     * listed), a second call finds nothing to do, an id of nothing changes nothing, a hostile id is refused before any
     * write; {@code describe} opens what {@code interrupted} listed (or, for a pattern whose submitted operations wait
     * rather than stand interrupted, what was submitted).
     */
    @Test
    void shouldRecoverOnlyTheOperationNamedAndDescribeIt(MongoDatabase database) {
        ConsistencyStrategy<C> strategy = ready(database);
        OperationId a = strategy.submit(change(OperationId.of("kit-one-a")));
        strategy.submit(change(OperationId.of("kit-one-b")));
        List<dev.consistencykit.core.InterruptedOperation> listed = strategy.interrupted(Duration.ZERO, 10);
        DatabaseSnapshot before = DatabaseSnapshot.of(database);

        assertThat(newStrategy(database).recoverOne("kit-no-such-operation", Duration.ZERO).examined()).isZero();
        assertThatThrownBy(() -> newStrategy(database).recoverOne(new org.bson.Document("$gt", ""), Duration.ZERO))
                .isInstanceOf(dev.consistencykit.core.InvalidInputException.class);
        assertThatThrownBy(() -> newStrategy(database).describe(new org.bson.Document("$gt", "")))
                .isInstanceOf(dev.consistencykit.core.InvalidInputException.class);
        assertThat(DatabaseSnapshot.of(database)).isEqualTo(before);
        if (listed.isEmpty()) {
            assertThat(strategy.describe(a.value())).as("the submitted operation, opened").get()
                    .extracting(dev.consistencykit.core.OperationView::id).isEqualTo(a.value());
            return;
        }

        Object first = listed.get(0).id();
        dev.consistencykit.core.OperationView view = strategy.describe(first).orElseThrow();
        assertThat(view.id()).isEqualTo(first);
        assertThat(view.state()).contains(listed.get(0).state());
        RecoveryReport one = newStrategy(database).recoverOne(first, Duration.ZERO);
        RecoveryReport again = newStrategy(database).recoverOne(first, Duration.ZERO);

        assertThat(one.examined()).isEqualTo(1);
        assertThat(again.repaired()).isZero();
        List<Object> left = strategy.interrupted(Duration.ZERO, 10).stream()
                .map(dev.consistencykit.core.InterruptedOperation::id).toList();
        assertThat(left).doesNotContain(first);
        for (dev.consistencykit.core.InterruptedOperation other : listed.subList(1, listed.size())) {
            if (!other.id().equals(first)) {
                assertThat(left).as("an operation not named stays for its own recovery").contains(other.id());
            }
        }
        newStrategy(database).recover(Duration.ZERO);
        assertThat(invariants(database)).isEmpty();
        assertThatThrownBy(() -> strategy.recoverOne(first, Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldRefuseUnacknowledgedWriteConcern(MongoDatabase database) {
        assertThatThrownBy(() -> newStrategy(database.withWriteConcern(WriteConcern.UNACKNOWLEDGED)))
                .isInstanceOf(UnsafeConfigurationException.class)
                .hasMessageContaining("w:0");
        assertThat(DatabaseSnapshot.of(database).documentCount()).isZero();
    }

    /**
     * This strategy as a {@link Workload}: seeded, one operation ({@link #change} of a fixed id, applied), recovery of
     * everything in flight, and the invariants plus "nothing left in flight"; what the crash exploration runs, and
     * what a pattern's own explorers and chaos runs can take too.
     */
    protected Workload workload() {
        OperationId id = OperationId.of("kit-crash");
        return new Workload() {
            @Override
            public void seed(MongoDatabase database) {
                ready(database);
            }

            @Override
            public void operate(MongoDatabase database, java.util.Random random) {
                newStrategy(database).apply(change(id));
            }

            @Override
            public void recover(MongoDatabase database) {
                newStrategy(database).recover(Duration.ZERO);
            }

            @Override
            public List<String> invariants(MongoDatabase database) {
                List<String> problems = new java.util.ArrayList<>(StrategyCompatibilityKit.this.invariants(database));
                long inFlight = newStrategy(database).status().inFlight();
                if (inFlight != 0) {
                    problems.add(inFlight + " operations still in flight after recovery");
                }
                return problems;
            }
        };
    }

    @Test
    void shouldKeepInvariantsWhenCrashedAtEveryWriteSite(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client)
                .name(getClass().getSimpleName())
                .workload(workload())
                .modes(faultModes())
                .build()
                .explore();

        assertThat(report.writeSites()).as("write sites of apply()").isPositive();
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    private static DatabaseSnapshot snapshotWithoutTimestamps(MongoDatabase database) {
        return withoutTimestamps(DatabaseSnapshot.of(database));
    }

    /** Drops date-valued fields, which recovery passes may legitimately re-stamp. */
    private static DatabaseSnapshot withoutTimestamps(DatabaseSnapshot snapshot) {
        java.util.Map<String, List<org.bson.Document>> stripped = new java.util.TreeMap<>();
        snapshot.collections().forEach((name, docs) -> stripped.put(name, docs.stream().map(d -> {
            org.bson.Document copy = new org.bson.Document();
            d.forEach((k, v) -> {
                if (!(v instanceof java.util.Date)) {
                    copy.append(k, v);
                }
            });
            return copy;
        }).toList()));
        return new DatabaseSnapshot(stripped);
    }
}
