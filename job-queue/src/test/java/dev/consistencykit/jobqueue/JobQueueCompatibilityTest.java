package dev.consistencykit.jobqueue;

import java.util.List;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.junit5.StrategyCompatibilityKit;

class JobQueueCompatibilityTest extends StrategyCompatibilityKit<JobRequest> {

    @Override
    protected ConsistencyStrategy<JobRequest> newStrategy(MongoDatabase database) {
        return Friends.queue(database).build();
    }

    @Override
    protected void seed(MongoDatabase database) {
        Friends.seedUsers(database, "ann", "bob");
    }

    @Override
    protected JobRequest change(OperationId id) {
        return Friends.befriend("ann", "bob").withId(id);
    }

    @Override
    protected JobRequest differentChange(OperationId id) {
        return JobRequest.of("befriend", new Document("a", "bob").append("b", "ann")).withId(id);
    }

    @Override
    protected List<String> invariants(MongoDatabase database) {
        return Friends.invariants(database);
    }
}
