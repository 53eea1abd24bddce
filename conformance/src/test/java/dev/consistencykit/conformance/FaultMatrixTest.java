package dev.consistencykit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.logreconciliation.Change;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.testkit.FaultMatrix;
import dev.consistencykit.testkit.FaultyNetwork;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;
import dev.consistencykit.twophase.Participant;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.twophase.TwoPhaseTransaction;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.VersionedStore;

/**
 * Every public call of the five entry types against a sick network and a hung server (through {@link FaultyNetwork}):
 * each ends within its bound with a result or a typed exception, never a raw driver exception, never a hang, and
 * never reports success for a write whose write concern was not confirmed.
 */
class FaultMatrixTest {

    private static final Duration TIMEOUT = Duration.ofMillis(500);
    private static final Duration BOUND = Duration.ofSeconds(8);
    private static final RetryPolicy FAST = RetryPolicy.DEFAULT.withBackoff(Duration.ofMillis(5), Duration.ofMillis(50));

    private final AtomicLong ids = new AtomicLong();
    private FaultyNetwork network;
    private MongoClient sick;
    private MongoDatabase direct;
    private MongoDatabase db;

    @BeforeEach
    void connect() {
        network = FaultyNetwork.inFrontOf(MongoTarget.fromEnvironment());
        // the driver re-checks a server at most this often after an error: short, so that a blip costs little
        sick = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(network.connectionString()))
                .applyToServerSettings(s -> s.minHeartbeatFrequency(20, TimeUnit.MILLISECONDS)
                        .heartbeatFrequency(200, TimeUnit.MILLISECONDS)).build());
        String name = MongoTestExtension.freshName("faultmatrix");
        direct = MongoTarget.fromEnvironment().client().getDatabase(name);
        db = sick.getDatabase(name);
    }

    @AfterEach
    void close() {
        network.close();
        sick.close();
        direct.drop();
    }

    private String next(String prefix) {
        return prefix + "-" + ids.incrementAndGet();
    }

    private FaultMatrix.Builder matrix() {
        return FaultMatrix.builder(network).bound(BOUND);
    }

    @Test
    void shouldGiveEveryTwoPhaseCallATypedAnswerInBoundedTime() {
        direct.getCollection("accounts").insertMany(List.of(new Document("_id", "a").append("balance", 1_000_000L),
                new Document("_id", "b").append("balance", 1_000_000L)));
        TwoPhaseCommit payments = TwoPhaseCommit.builder(db).operationTimeout(TIMEOUT).retryPolicy(FAST).build();

        List<String> violations = matrix()
                .call("ensureIndexes", payments::ensureIndexes)
                .call("transfer", () -> payments.transfer(Transfer.of(OperationId.of(next("t")), "a", "b", 1)))
                .call("submitTransfer", () -> payments.submitTransfer(Transfer.of(OperationId.of(next("s")), "a",
                        "b", 1)))
                .call("apply", () -> payments.apply(TwoPhaseTransaction.of(OperationId.of(next("x")),
                        Participant.on("accounts", "a").prepare(Updates.inc("n", 1)))))
                .call("processNext", payments::processNext)
                .call("recover", () -> payments.recover(Duration.ZERO))
                .call("interrupted", () -> payments.interrupted(Duration.ZERO, 10))
                .call("status", payments::status)
                .call("prune", payments::prune)
                .call("readSettled", () -> payments.readSettled("accounts", List.of("a", "b"), Duration.ofSeconds(2)))
                .call("audit", () -> payments.audit("balance"))
                .run();

        assertThat(violations).isEmpty();
        assertThat(network.writeConcernErrorsInjected()).as("write-concern errors injected").isPositive();
    }

    @Test
    void shouldGiveEveryJobQueueCallATypedAnswerInBoundedTime() {
        direct.getCollection("orders").insertOne(new Document("_id", "o1").append("n", 0));
        JobQueue queue = JobQueue.builder(db).operationTimeout(TIMEOUT).retryPolicy(FAST)
                .handler("touch", ctx -> ctx.applyOnce("orders", "o1", Updates.inc("n", 1))).build();

        List<String> violations = matrix()
                .call("ensureIndexes", queue::ensureIndexes)
                .call("enqueue", () -> queue.enqueue(JobRequest.of("touch", new Document())
                        .withId(OperationId.of(next("j")))))
                .call("apply", () -> queue.apply(JobRequest.of("touch", new Document())
                        .withId(OperationId.of(next("a")))))
                .call("enqueueWith", () -> queue.enqueueWith(db.getCollection("orders"), "o1", null,
                        Updates.inc("m", 1), JobRequest.of("touch", new Document()).withId(OperationId.of(next("w")))))
                .call("relayOutbox", () -> queue.relayOutbox(db.getCollection("orders")))
                .call("processNext", queue::processNext)
                .call("recover", () -> queue.recover(Duration.ZERO))
                .call("requeue", () -> queue.requeue(Duration.ZERO))
                .call("interrupted", () -> queue.interrupted(Duration.ZERO, 10))
                .call("status", queue::status)
                .call("countsByType", queue.operator()::countsByType)
                .call("prune", queue::prune)
                .call("replayDead", () -> queue.operator().replayDead(OperationId.of("nothing")))
                .call("ensureEffectIndexes", () -> JobQueue.ensureEffectIndexes(db.getCollection("orders")
                        .withTimeout(500, TimeUnit.MILLISECONDS)))
                .run();

        assertThat(violations).isEmpty();
        assertThat(network.writeConcernErrorsInjected()).as("write-concern errors injected").isPositive();
    }

    @Test
    void shouldGiveEveryLedgerCallATypedAnswerInBoundedTime() {
        Ledger ledger = Ledger.builder(db).operationTimeout(TIMEOUT).retryPolicy(FAST).build();

        List<String> violations = matrix()
                .reset(() -> direct.getCollection("ledgerSeed").insertOne(new Document()))
                .call("ensureIndexes", ledger::ensureIndexes)
                .call("append", () -> ledger.append(LedgerTransaction.of(Change.credit("acc", 5))
                        .withId(OperationId.of(next("l")))))
                .call("apply", () -> ledger.apply(LedgerTransaction.of(Change.credit("acc", 5))
                        .withId(OperationId.of(next("p")))))
                .call("recover()", () -> ledger.recover())
                .call("recover", () -> ledger.recover(Duration.ZERO))
                .call("balance", () -> ledger.balance("acc"))
                .call("cursor.poll", () -> ledger.cursor("acc", 0).poll(10))
                .call("reconcile", () -> ledger.reconcile("acc", false))
                .call("accountsWithGaps", ledger::accountsWithGaps)
                .call("archive", () -> ledger.archive(Duration.ofDays(1)))
                .call("interrupted", () -> ledger.interrupted(Duration.ZERO, 10))
                .call("status", ledger::status)
                .call("cancel", () -> {
                    OperationId id = OperationId.of(next("k"));
                    ledger.submit(LedgerTransaction.of(Change.credit("acc", 1)).withId(id));
                    ledger.cancel(id);
                })
                .call("reverse", () -> {
                    OperationId id = OperationId.of(next("v"));
                    ledger.apply(LedgerTransaction.of(Change.credit("acc", 1)).withId(id));
                    ledger.reverse(id);
                })
                .call("cursorOverAll.poll", () -> ledger.cursorOverAll(java.util.Map.of()).poll(10))
                .run();

        assertThat(violations).isEmpty();
        assertThat(network.writeConcernErrorsInjected()).as("write-concern errors injected").isPositive();
    }

    @Test
    void shouldGiveEveryVersionedStoreCallATypedAnswerInBoundedTime() {
        VersionedStore store = VersionedStore.builder(db).operationTimeout(TIMEOUT).retryPolicy(FAST).build();

        List<String> violations = matrix()
                .call("ensureIndexes", store::ensureIndexes)
                .call("createRoot", () -> store.createRoot(next("r")))
                .call("update", () -> {
                    String root = next("u");
                    store.createRoot(root);
                    store.update(root, (tree, change) -> change.put("i", new Document("v", 1)));
                })
                .call("commit", () -> {
                    String root = next("c");
                    store.createRoot(root);
                    store.commit(ChangeSet.on(root, 0).put("i", new Document("v", 1)).build());
                })
                .call("submit", () -> {
                    String root = next("s");
                    store.createRoot(root);
                    store.submit(ChangeSet.on(root, 0).put("i", new Document("v", 1)).build());
                })
                .call("apply", () -> {
                    String root = next("a");
                    store.createRoot(root);
                    store.apply(ChangeSet.on(root, 0).put("i", new Document("v", 1)).build());
                })
                .call("readAsOf", () -> store.readAsOf("c-" + ids.get(), 0))
                .call("history", () -> store.history("r-1", "i"))
                .call("diff", () -> store.diff("r-1", 0, 0))
                .call("read", () -> store.read("r-1"))
                .call("get", () -> store.get("r-1", "i"))
                .call("versions", () -> store.versions("r-1"))
                .call("recover", () -> store.recover(Duration.ZERO))
                .call("settle", store::settle)
                .call("cleanup", store::cleanup)
                .call("prune", store::prune)
                .call("interrupted", () -> store.interrupted(Duration.ZERO, 10))
                .call("status", store::status)
                .run();

        assertThat(violations).isEmpty();
        assertThat(network.writeConcernErrorsInjected()).as("write-concern errors injected").isPositive();
    }

    @Test
    void shouldGiveEverySyncFlagCallATypedAnswerInBoundedTime() {
        direct.getCollection("users").insertOne(new Document("_id", "u1").append("name", "Ann"));
        direct.getCollection("comments").insertOne(new Document("_id", "c1").append("authorId", "u1")
                .append("authorName", "Ann"));
        SyncFlag sync = SyncFlag.builder(db).operationTimeout(TIMEOUT).retryPolicy(FAST).master("users", "name")
                .target(SyncTarget.in("comments", "authorId").copy("name", "authorName")).build();

        List<String> violations = matrix()
                .call("ensureIndexes", sync::ensureIndexes)
                .call("update", () -> sync.update("u1", Updates.set("name", next("Ann"))))
                .call("submit", () -> sync.submit(dev.consistencykit.syncflag.MasterUpdate.of("u1",
                        Updates.set("name", next("Anne")))))
                .call("resync", () -> sync.resync("u1"))
                .call("recover()", () -> sync.recover())
                .call("recover", () -> sync.recover(Duration.ZERO))
                .call("readRepair", () -> sync.readRepair(new Document("_id", "u1")))
                .call("verify", () -> sync.verify(false))
                .call("interrupted", () -> sync.interrupted(Duration.ZERO, 10))
                .call("status", sync::status)
                .call("registered", () -> SyncFlag.registered(db.withTimeout(500, TimeUnit.MILLISECONDS)))
                .run();

        assertThat(violations).isEmpty();
        assertThat(network.writeConcernErrorsInjected()).as("write-concern errors injected").isPositive();
    }
}
