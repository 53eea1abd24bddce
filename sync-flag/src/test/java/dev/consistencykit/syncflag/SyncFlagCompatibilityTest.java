package dev.consistencykit.syncflag;

import java.util.List;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.junit5.StrategyCompatibilityKit;

class SyncFlagCompatibilityTest extends StrategyCompatibilityKit<MasterUpdate> {

    private static final int USERS = 5;

    @Override
    protected ConsistencyStrategy<MasterUpdate> newStrategy(MongoDatabase database) {
        return Blog.sync(database).build();
    }

    @Override
    protected void seed(MongoDatabase database) {
        Blog.seed(database, USERS, 2);
    }

    /** The kit's ids end in different characters, so its operations land on different masters. */
    private static String masterOf(OperationId id) {
        return "u" + Math.floorMod(id.value().toString().chars().sum(), USERS);
    }

    @Override
    protected MasterUpdate change(OperationId id) {
        return new MasterUpdate(id, masterOf(id), Updates.set("name", "Renamed " + id.value()));
    }

    @Override
    protected MasterUpdate differentChange(OperationId id) {
        return new MasterUpdate(id, masterOf(id), Updates.set("name", "Other " + id.value()));
    }

    @Override
    protected List<String> invariants(MongoDatabase database) {
        return Blog.invariants(database);
    }
}
