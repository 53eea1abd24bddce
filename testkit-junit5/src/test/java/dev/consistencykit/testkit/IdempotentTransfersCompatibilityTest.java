package dev.consistencykit.testkit;

import java.util.List;
import java.util.Map;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.fixture.IdempotentTransfers;
import dev.consistencykit.testkit.fixture.IdempotentTransfers.Transfer;
import dev.consistencykit.testkit.junit5.StrategyCompatibilityKit;

/** Runs the compatibility kit against the fixture strategy, proving the kit itself works end to end. */
class IdempotentTransfersCompatibilityTest extends StrategyCompatibilityKit<Transfer> {

    static final Map<String, Long> INITIAL = Map.of("a", 100L, "b", 100L);

    static void seedAccounts(MongoDatabase db) {
        INITIAL.forEach((id, balance) -> db.getCollection("accounts")
                .insertOne(new Document("_id", id).append("balance", balance).append("applied", List.of())));
    }

    @Override
    protected ConsistencyStrategy<Transfer> newStrategy(MongoDatabase database) {
        return new IdempotentTransfers(database);
    }

    @Override
    protected void seed(MongoDatabase database) {
        seedAccounts(database);
    }

    @Override
    protected Transfer change(OperationId id) {
        return new Transfer(id, "a", "b", 10);
    }

    @Override
    protected Transfer differentChange(OperationId id) {
        return new Transfer(id, "a", "b", 11);
    }

    @Override
    protected List<String> invariants(MongoDatabase database) {
        return IdempotentTransfers.invariants(database, 200, INITIAL);
    }
}
