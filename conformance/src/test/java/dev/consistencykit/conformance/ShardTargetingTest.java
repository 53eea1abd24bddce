package dev.consistencykit.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.ShardTargeting;
import dev.consistencykit.testkit.Sharding;
import dev.consistencykit.testkit.junit5.MongoTestExtension;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.VersionedStore;

/**
 * Where each pattern's commands go on a sharded cluster, with its collections sharded as docs/operations.md
 * recommends, measured from the server's own plans ({@link ShardTargeting}): every write of an operation's path reaches
 * one shard (a transfer, an append and its commit, an enqueue and the job's run, a commit, an update of a master), so
 * its cost does not grow with the shards; what goes to every shard is the periodic work (recovery, status, sweeps)
 * and what the docs say. Each call's reach is printed (the table of docs/operations.md, "Sharded clusters", was
 * filled from it). Runs where the server can shard.
 */
@ExtendWith(MongoTestExtension.class)
class ShardTargetingTest {

    private MongoTarget target;
    private MongoDatabase db;
    private Sharding sharding;

    @BeforeEach
    void freshUnplannedDatabase(MongoTarget target) {
        this.target = target;
        this.sharding = Sharding.of(target.client());
        assumeTrue(sharding.unavailable().isEmpty(), sharding.unavailable().orElse(""));
        this.db = target.client().getDatabase(MongoTarget.freshDatabaseName("targeting"));
    }

    @AfterEach
    void drop() {
        if (db != null) {
            MongoTarget.drop(db);
        }
    }

    private void shard(String collection, String field) {
        sharding.shard(db, collection, new Document(field, "hashed"));
    }

    /** The reach of every call {@code operation} sends, printed under {@code title}; the writes among them. */
    private List<ShardTargeting.Call> measure(String title, Runnable operation) {
        try (ShardTargeting targeting = ShardTargeting.attach(target, db.getName())) {
            operation.run();
            List<ShardTargeting.Call> calls = targeting.calls(db);
            Map<String, Integer> widest = targeting.widest(db);
            System.out.println("shard targeting, " + title + ": " + widest);
            return calls;
        }
    }

    private static List<ShardTargeting.Call> writes(List<ShardTargeting.Call> calls) {
        List<ShardTargeting.Call> writes = new ArrayList<>();
        for (ShardTargeting.Call c : calls) {
            if (List.of("insert", "update", "delete", "findAndModify").contains(c.command())) {
                writes.add(c);
            }
        }
        return writes;
    }

    @Test
    void shouldSendEveryWriteOfATransferToOneShard() {
        shard("transactions", "_id");
        shard("accounts", "_id");
        db.getCollection("accounts").insertMany(List.of(new Document("_id", "a").append("balance", 1_000L),
                new Document("_id", "b").append("balance", 1_000L)));
        TwoPhaseCommit tpc = TwoPhaseCommit.on(db);
        tpc.ensureIndexes();
        tpc.transfer(Transfer.of(OperationId.of("warm"), "a", "b", 1));

        List<ShardTargeting.Call> transfer = measure("two-phase transfer",
                () -> tpc.transfer(Transfer.of(OperationId.of("t1"), "a", "b", 5)));
        measure("two-phase recovery pass and status", () -> {
            tpc.recover(Duration.ZERO);
            tpc.status();
        });

        assertThat(writes(transfer)).isNotEmpty().allSatisfy(c -> assertThat(c.shards()).as(c.toString())
                .isEqualTo(1));
    }

    @Test
    void shouldSendEveryWriteOfAnAppendAndItsCommitToOneShard() {
        shard("ledgerAccounts", "_id");
        shard("ledgerArchive", "_id");
        db.getCollection("ledgerAccounts").insertMany(List.of(
                new Document("_id", "a").append("balance", 1_000L).append("seqId", 0L),
                new Document("_id", "b").append("balance", 1_000L).append("seqId", 0L)));
        Ledger ledger = Ledger.on(db);
        ledger.ensureIndexes();
        ledger.apply(LedgerTransaction.transfer("a", "b", 1));

        List<ShardTargeting.Call> apply = measure("ledger append and commit",
                () -> ledger.apply(LedgerTransaction.transfer("a", "b", 5)));
        measure("ledger balance and balances", () -> {
            ledger.balance("a");
            ledger.balances(List.of("a", "b"));
        });
        measure("ledger committer pass and archive", () -> {
            ledger.recover(Duration.ZERO);
            ledger.archive(Duration.ZERO);
        });

        assertThat(writes(apply)).isNotEmpty().allSatisfy(c -> assertThat(c.shards()).as(c.toString())
                .isEqualTo(1));
    }

    @Test
    void shouldSendEveryWriteOfAnEnqueueAndTheJobsRunToOneShard() {
        shard("jobKeys", "_id");
        shard("jobSchedules", "_id");
        shard("counters", "_id");
        shard("orders", "_id");
        db.getCollection("counters").insertOne(new Document("_id", "c").append("n", 0L));
        db.getCollection("orders").insertOne(new Document("_id", "o1").append("state", "new"));
        JobQueue queue = JobQueue.builder(db).handler("count", ctx -> ctx.applyOnce("counters", "c",
                Updates.inc("n", 1L))).build();
        queue.ensureIndexes();
        queue.enqueue(JobRequest.of("count", null));
        queue.processNext();

        List<ShardTargeting.Call> enqueue = measure("job queue enqueue",
                () -> queue.enqueue(JobRequest.of("count", null)));
        List<ShardTargeting.Call> run = measure("job queue run (claim, handler's applyOnce, complete)",
                queue::processNext);
        List<ShardTargeting.Call> outbox = measure("job queue enqueueWith (outbox)",
                () -> queue.enqueueWith(db.getCollection("orders"), "o1", Filters.eq("state", "new"),
                        Updates.set("state", "paid"), JobRequest.of("count", null)));
        measure("job queue recovery pass and status", () -> {
            queue.recover(Duration.ZERO);
            queue.status();
        });

        for (List<ShardTargeting.Call> calls : List.of(enqueue, run, outbox)) {
            assertThat(writes(calls)).isNotEmpty().allSatisfy(c -> assertThat(c.shards()).as(c.toString())
                    .isEqualTo(1));
        }
    }

    @Test
    void shouldSendEveryWriteOfACommitToOneShardAndEachReadOfATreeToOne() {
        shard("versionRoots", "_id");
        shard("versionItems", "root");
        shard("versionHistory", "root");
        VersionedStore store = VersionedStore.on(db);
        store.ensureIndexes();
        store.createRoot("r");
        store.commit(ChangeSet.on("r", 0).put("i0", new Document("n", 0)).build());

        List<ShardTargeting.Call> commit = measure("versioning commit",
                () -> store.commit(ChangeSet.on("r", 1).put("i1", new Document("n", 1)).build()));
        List<ShardTargeting.Call> read = measure("versioning read and readAsOf", () -> {
            store.read("r");
            store.readAsOf("r", 1);
        });
        measure("versioning maintenance (settle, clean-up, prune)", store::maintenance);

        assertThat(writes(commit)).isNotEmpty().allSatisfy(c -> assertThat(c.shards()).as(c.toString())
                .isEqualTo(1));
        assertThat(read).isNotEmpty();
    }

    @Test
    void shouldSendAMastersUpdateToOneShardAndItsCopiesToTheShardsOfTheirKey() {
        shard("users", "_id");
        shard("comments", "authorId");
        db.getCollection("users").insertOne(new Document("_id", "u1").append("name", "Ann"));
        db.getCollection("comments").insertOne(new Document("_id", "c1").append("authorId", "u1")
                .append("authorName", "Ann"));
        SyncFlag sync = SyncFlag.builder(db).master("users", "name")
                .target(SyncTarget.in("comments", "authorId").copy("name", "authorName")).build();
        sync.ensureIndexes();
        sync.update("u1", Updates.set("name", "Ann B"));

        List<ShardTargeting.Call> update = measure("sync flag update and propagation",
                () -> sync.update("u1", Updates.set("name", "Ann C")));
        measure("sync flag sweep", () -> sync.recover(Duration.ZERO));

        assertThat(writes(update)).isNotEmpty().allSatisfy(c -> assertThat(c.shards()).as(c.toString())
                .isEqualTo(1));
    }
}
