package dev.consistencykit.versioning;

import java.util.List;
import java.util.Map;
import java.util.Set;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.junit5.StrategyCompatibilityKit;

class VersionedStoreCompatibilityTest extends StrategyCompatibilityKit<ChangeSet> {

    private static final Map<Object, Document> EMPTY = Map.of();

    @Override
    protected ConsistencyStrategy<ChangeSet> newStrategy(MongoDatabase database) {
        return Catalogue.store(database).build();
    }

    @Override
    protected void seed(MongoDatabase database) {
        VersionedStore store = Catalogue.store(database).build();
        store.ensureIndexes();
        store.createRoot(Catalogue.ROOT);
    }

    @Override
    protected ChangeSet change(OperationId id) {
        return Catalogue.withChecksum(EMPTY, ChangeSet.on(Catalogue.ROOT, 0).id(id)
                .put("i0", Catalogue.product("Renamed", 150)).delete("i1").put("i9", Catalogue.product("New", 1)));
    }

    @Override
    protected ChangeSet differentChange(OperationId id) {
        return Catalogue.withChecksum(EMPTY, ChangeSet.on(Catalogue.ROOT, 0).id(id)
                .put("i0", Catalogue.product("Renamed", 151)));
    }

    @Override
    protected List<String> invariants(MongoDatabase database) {
        return Catalogue.invariants(database, Set.of(EMPTY, Catalogue.applied(EMPTY, change(OperationId.of("x")))));
    }
}
