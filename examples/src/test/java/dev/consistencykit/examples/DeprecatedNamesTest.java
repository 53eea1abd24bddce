package dev.consistencykit.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.jobqueue.JobListener;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncListener;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.VersionListener;
import dev.consistencykit.versioning.VersionedStore;

/**
 * The names that changed when the five modules took one vocabulary still compile and still work, deprecated for
 * removal: the listeners' earlier names ({@code SyncListener}, {@code JobListener}, {@code VersionListener}) and the
 * earlier recovery methods ({@code SyncFlag.sweep()}, {@code Ledger.commitPending()}, {@code JobQueue.sweep()}).
 */
@SuppressWarnings("removal")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DeprecatedNamesTest {

    private MongoDatabase db;

    @BeforeAll
    void open() {
        db = MongoTarget.fromEnvironment().client().getDatabase(MongoTarget.freshDatabaseName("oldnames"));
    }

    @AfterAll
    void drop() {
        db.drop();
    }

    @Test
    void shouldStillCallAListenerImplementedUnderItsEarlierName() {
        List<String> heard = new ArrayList<>();
        SyncFlag sync = SyncFlag.builder(db).master("users", "name")
                .target(SyncTarget.in("comments", "authorId").copy("name", "authorName"))
                .listener(new SyncListener() {
                    @Override
                    public void onMasterUpdated(OperationId id, Object masterId, long version, boolean flagged) {
                        heard.add("sync " + masterId);
                    }
                }).build();
        sync.ensureIndexes();
        db.getCollection("users").insertOne(new Document("_id", "u1").append("name", "Ann"));
        sync.update("u1", com.mongodb.client.model.Updates.set("name", "Bea"));
        assertThat(sync.sweep().examined()).isZero();

        JobQueue jobs = JobQueue.builder(db).handler("noop", ctx -> { }).listener(new JobListener() { }).build();
        jobs.ensureIndexes();
        jobs.enqueue(JobRequest.of("noop", new Document()));
        assertThat(jobs.sweep()).isZero();

        VersionedStore store = VersionedStore.builder(db).listener(new VersionListener() { }).build();
        store.ensureIndexes();
        store.createRoot("r");
        store.apply(ChangeSet.on("r", 0).put("a", new Document("v", 1)).build());

        Ledger ledger = Ledger.builder(db).build();
        ledger.ensureIndexes();
        assertThat(ledger.commitPending().examined()).isZero();

        assertThat(heard).containsExactly("sync u1");
    }
}
