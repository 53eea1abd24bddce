package dev.consistencykit.testkit;

import java.time.Duration;
import java.util.List;
import java.util.Random;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.fixture.IdempotentTransfers;
import dev.consistencykit.testkit.fixture.IdempotentTransfers.Transfer;

/**
 * Transfers between two accounts through the fixture strategy, described once for every runner; {@code guardless}
 * applies without its marker, which the runners must catch.
 */
record TransfersWorkload(boolean guardless) implements Workload {

    @Override
    public void seed(MongoDatabase database) {
        IdempotentTransfersCompatibilityTest.seedAccounts(database);
    }

    @Override
    public void operate(MongoDatabase database, Random random) {
        boolean aToB = random.nextBoolean();
        new IdempotentTransfers(database, guardless).apply(new Transfer(OperationId.of("t" + random.nextLong()),
                aToB ? "a" : "b", aToB ? "b" : "a", 1 + random.nextInt(10)));
    }

    @Override
    public void recover(MongoDatabase database) {
        new IdempotentTransfers(database, guardless).recover(Duration.ZERO);
    }

    @Override
    public List<String> invariants(MongoDatabase database) {
        return IdempotentTransfers.invariants(database, 200, IdempotentTransfersCompatibilityTest.INITIAL);
    }
}
