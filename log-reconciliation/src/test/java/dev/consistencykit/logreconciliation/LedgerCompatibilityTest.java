package dev.consistencykit.logreconciliation;

import java.util.List;
import java.util.Map;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.junit5.StrategyCompatibilityKit;

// javadoc:start testkit-junit5/src/main/java/dev/consistencykit/testkit/junit5/StrategyCompatibilityKit.java
class LedgerCompatibilityTest extends StrategyCompatibilityKit<LedgerTransaction> {

    private static final Map<String, Long> OPENING = Books.accounts(3, 1_000);

    @Override
    protected ConsistencyStrategy<LedgerTransaction> newStrategy(MongoDatabase database) {
        return Books.ledger(database).build();
    }

    @Override
    protected void seed(MongoDatabase database) {
        Books.seed(database, OPENING);
    }

    @Override
    protected LedgerTransaction change(OperationId id) {
        return LedgerTransaction.transfer("a0", "a1", 100).withId(id);
    }

    @Override
    protected LedgerTransaction differentChange(OperationId id) {
        return LedgerTransaction.transfer("a0", "a2", 100).withId(id);
    }

    @Override
    protected List<String> invariants(MongoDatabase database) {
        return Books.invariants(database, OPENING, true, null);
    }
}
// javadoc:end
