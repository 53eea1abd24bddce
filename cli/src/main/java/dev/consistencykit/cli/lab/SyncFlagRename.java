package dev.consistencykit.cli.lab;

import static dev.consistencykit.cli.lab.ContenderWorkloads.RENAMED_USERS;
import static dev.consistencykit.cli.lab.ContenderWorkloads.copiesMatchMaster;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.syncflag.SyncFlag;

/** A user's rename copied into her comments: the reader compares a master with its copies. */
final class SyncFlagRename implements Contender {

    private static final int USERS = RENAMED_USERS;
    private final AtomicLong renames = new AtomicLong();

    @Override
    public String name() {
        return "sync flag";
    }

    @Override
    public String pattern() {
        return "sync-flag";
    }

    @Override
    public String workload() {
        return "rename";
    }

    @Override
    public void setup(MongoDatabase db) {
        SyncFlagLab.seed(db, USERS, 5);
        SyncFlagLab.sync(db).ensureIndexes();
    }

    @Override
    public Instance start(MongoDatabase db) {
        SyncFlag sync = SyncFlagLab.sync(db);
        return new ContenderActions(random -> sync.update("u" + random.nextInt(USERS),
                Updates.set("name", "Name " + renames.incrementAndGet())), sync::recover,
                random -> copiesMatchMaster(db, random));
    }

    @Override
    public String anomalies() {
        return "a raw read between the master's write and the propagation sees the old name on some copies;"
                + " copies never go back to an older name.";
    }

    @Override
    public Optional<String> noConsistentRead() {
        return Optional.of("copies may lag their master while a propagation is in flight; readRepair finishes"
                + " one master's propagation but is not a read of master and copies together");
    }

    @Override
    public List<String> invariants(MongoDatabase db) {
        return SyncFlagLab.invariants(db);
    }
}
