package dev.consistencykit.twophase;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.junit5.StrategyCompatibilityKit;

class TwoPhaseCommitCompatibilityTest extends StrategyCompatibilityKit<TwoPhaseTransaction> {

    private static final Map<String, Long> ACCOUNTS = Bank.accounts(2, 1_000);

    @Override
    protected ConsistencyStrategy<TwoPhaseTransaction> newStrategy(MongoDatabase database) {
        return TwoPhaseCommit.builder(database).retryPolicy(TestPolicies.FAST_RETRY).build();
    }

    @Override
    protected void seed(MongoDatabase database) {
        Bank.seed(database, ACCOUNTS);
    }

    @Override
    protected TwoPhaseTransaction change(OperationId id) {
        return TwoPhaseCommit.builder(dummy()).build().transferTransaction(Transfer.of(id, "a0", "a1", 10));
    }

    @Override
    protected TwoPhaseTransaction differentChange(OperationId id) {
        return TwoPhaseCommit.builder(dummy()).build().transferTransaction(Transfer.of(id, "a0", "a1", 11));
    }

    @Override
    protected List<String> invariants(MongoDatabase database) {
        return Bank.invariants(database, ACCOUNTS, true);
    }

    private static MongoDatabase dummy() {
        return dev.consistencykit.testkit.MongoTarget.fromEnvironment().client().getDatabase("unused");
    }

    static Duration zero() {
        return Duration.ZERO;
    }
}
