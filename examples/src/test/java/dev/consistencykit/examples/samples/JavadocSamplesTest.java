package dev.consistencykit.examples.samples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Set;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.MongoSocketException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.Maintenance;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.ConditionalUpdates;
import dev.consistencykit.core.spi.GuardedResult;
import dev.consistencykit.core.spi.Transition;
import dev.consistencykit.core.spi.UpdateOutcome;
import dev.consistencykit.dashboard.Dashboard;
import dev.consistencykit.dashboard.DashboardHttpServer;
import dev.consistencykit.dashboard.DashboardSettings;
import dev.consistencykit.embedded.EmbeddedMongo;
import dev.consistencykit.examples.samples.ExplorationSample.Transfers;
import dev.consistencykit.jobqueue.DeadJobs;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobQueueOperator;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.jobqueue.JobSearch;
import dev.consistencykit.jobqueue.JobState;
import dev.consistencykit.jobqueue.JobWorkers;
import dev.consistencykit.logreconciliation.Change;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.logreconciliation.ReconcileReport;
import dev.consistencykit.micrometer.ConsistencyKitMeters;
import dev.consistencykit.micrometer.ConsistencyKitObservations;
import dev.consistencykit.syncflag.MasterUpdate;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.testkit.ChaosRunner;
import dev.consistencykit.testkit.ContendedRecovery;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMatrix;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.FaultyNetwork;
import dev.consistencykit.testkit.IndexCoverage;
import dev.consistencykit.testkit.InjectedCrash;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.ReadBounds;
import dev.consistencykit.testkit.RoundTripCounter;
import dev.consistencykit.testkit.ShardTargeting;
import dev.consistencykit.testkit.contract.CheckResult;
import dev.consistencykit.testkit.contract.ServerContract;
import dev.consistencykit.testkit.junit5.MongoTestExtension;
import dev.consistencykit.twophase.Participant;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.twophase.TwoPhaseListener;
import dev.consistencykit.twophase.TwoPhaseTransaction;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.Retention;
import dev.consistencykit.versioning.VersionedStore;
import dev.consistencykit.versioning.VersionedTree;

/**
 * The usage examples in the public Javadoc, each the region between {@code // javadoc:start <source>} and
 * {@code // javadoc:end} of a test here; {@link JavadocSamplesMatchTest} checks that each Javadoc block is its region.
 * The helpers ({@code seedAccounts}, {@code newStrategy}, {@code checkMoney}…) stand for the reader's own code.
 */
@ExtendWith(MongoTestExtension.class)
class JavadocSamplesTest {

    private static final Logger log = LoggerFactory.getLogger(JavadocSamplesTest.class);
    private static final Transfer transfer = Transfer.of(OperationId.of("t-1"), "alice", "bob", 30);

    static void seedAccounts(MongoDatabase db) {
        ExplorationSample.seedAccounts(db);
    }

    static TwoPhaseCommit newStrategy(MongoDatabase db) {
        return ExplorationSample.newStrategy(db);
    }

    static List<String> checkMoney(MongoDatabase db) {
        return ExplorationSample.checkMoney(db);
    }

    static Transfer change(int i) {
        return Transfer.of(OperationId.of("t-" + i), "alice", "bob", 1);
    }

    static TwoPhaseCommit strategy(MongoDatabase db) {
        return TwoPhaseCommit.builder(db).build();
    }

    static void runWorkload(TwoPhaseCommit strategy) {
        strategy.transfer(transfer);
        strategy.recover(Duration.ZERO);
    }

    static void awaitShutdown() {
        // a service would wait for its shutdown signal here
    }

    @Test
    void consistencyStrategy(MongoDatabase database) {
        seedAccounts(database);
        TwoPhaseTransaction transaction = newStrategy(database).transferTransaction(transfer);
        // javadoc:start core/src/main/java/dev/consistencykit/core/ConsistencyStrategy.java
        ConsistencyStrategy<TwoPhaseTransaction> strategy = TwoPhaseCommit.builder(database).name("payments").build();
        strategy.ensureIndexes();
        OperationResult result = strategy.apply(transaction); // driven to a terminal state in this thread
        strategy.recover(Duration.ofMinutes(1));             // at start-up and periodically
        // javadoc:end
        assertThat(result.id()).isEqualTo(transfer.id());
    }

    @Test
    void deadJobs(MongoDatabase db) {
        JobQueue queue = JobQueue.builder(db)
                .handler("email", ctx -> {
                    throw new IllegalStateException("timeout");
                }).build();
        OperationId id = queue.enqueue(JobRequest.of("email",
                new Document()).withMaxAttempts(1));
        queue.processNext();
        // javadoc:start job-queue/src/main/java/dev/consistencykit/jobqueue/DeadJobs.java
        queue.operator().replayDead(DeadJobs.all().ofType("email").errorContaining("timeout"));
        queue.operator().discardDead(DeadJobs.ids(List.of(id)));
        // javadoc:end
        assertThat(queue.operator().dead(0, 10)).as("replayed, so not dead, so not discarded").isEmpty();
        assertThat(queue.status().count("todo")).isEqualTo(1);
    }

    @Test
    void jobQueueOperator(MongoDatabase db) {
        JobQueue queue = JobQueue.builder(db)
                .handler("mail", ctx -> {
                    throw new IllegalStateException("smtp down");
                }).build();
        queue.enqueue(JobRequest.of("mail", new Document()).withMaxAttempts(1));
        queue.processNext();
        // javadoc:start job-queue/src/main/java/dev/consistencykit/jobqueue/JobQueueOperator.java
        JobQueueOperator operator = queue.operator();
        List<InterruptedOperation> dead = operator.dead(0, 20);   // each with the error that killed it
        long replayed = operator.replayDead(DeadJobs.all().ofType("mail"));
        // javadoc:end
        assertThat(dead).hasSize(1);
        assertThat(replayed).isEqualTo(1);
        assertThat(operator.dead(0, 10)).as("replayed").isEmpty();
        assertThat(queue.status().count("todo")).isEqualTo(1);
    }

    @Test
    void jobSearch(MongoDatabase db) {
        JobQueue queue = JobQueue.builder(db)
                .handler("email", ctx -> {
                    throw new IllegalStateException("timeout");
                }).build();
        queue.ensureIndexes();
        Instant since = Instant.now().minusSeconds(60);
        queue.enqueue(JobRequest.of("email", new Document()).withMaxAttempts(1));
        queue.processNext();
        // javadoc:start job-queue/src/main/java/dev/consistencykit/jobqueue/JobSearch.java
        queue.operator().jobs(JobSearch.all().ofType("email").enqueuedFrom(since), 50);
        queue.operator().jobs(JobSearch.all().inStates(JobState.DEAD, JobState.FAILED), 50);
        queue.operator().jobs(JobSearch.printed(List.of("6b0ad2650cb444495958755d")), 10);
        // javadoc:end
        assertThat(queue.operator().jobs(JobSearch.all().ofType("email").enqueuedFrom(since), 50)).hasSize(1);
        assertThat(queue.operator().jobs(JobSearch.all().inStates(JobState.DEAD, JobState.FAILED), 50)).hasSize(1);
        assertThat(queue.operator().jobs(JobSearch.printed(List.of("6b0ad2650cb444495958755d")), 10)).isEmpty();
    }

    @Test
    void serverClock(MongoDatabase database) {
        // javadoc:start core/src/main/java/dev/consistencykit/core/ServerClock.java
        ServerClock clock = ServerClock.of(database);
        Instant cutoff = clock.now().minus(Duration.ofSeconds(30));   // older than this is stale
        // javadoc:end
        assertThat(cutoff).isBefore(clock.now());
    }

    @Test
    void transition(MongoDatabase db) {
        MongoCollection<Document> transactions = db.getCollection("transactions");
        String txId = "tx-1";
        String me = "worker-7";
        transactions.insertOne(new Document("_id", txId).append("state", "pending").append("owner", me));
        // javadoc:start core/src/main/java/dev/consistencykit/core/Transition.java
        Transition commit = Transition.of("state", "pending", "applied").guardedBy(Filters.eq("owner", me));
        GuardedResult r = ConditionalUpdates.transition(transactions, txId, commit);
        // javadoc:end
        assertThat(r.outcome()).isEqualTo(UpdateOutcome.APPLIED);
    }

    @Test
    void maintenance(MongoDatabase db) {
        TwoPhaseCommit payments = TwoPhaseCommit.builder(db).name("payments").build();
        JobQueue queue = JobQueue.builder(db).handler("ship", ctx -> { }).build();
        MongoCollection<Document> orders = db.getCollection("orders");
        // javadoc:start core/src/main/java/dev/consistencykit/core/Maintenance.java
        Maintenance maintenance = Maintenance.builder()
                .strategy(payments)                       // each pattern's own steps (recover, prune…)
                .step("relay orders", Duration.ofSeconds(5), () -> queue.relayOutbox(orders))
                .build().start();
        maintenance.health();                              // for a health endpoint
        maintenance.stop(Duration.ofSeconds(5));
        // javadoc:end
        assertThat(maintenance.health()).isNotEmpty();
    }

    @Test
    void retryPolicy(MongoDatabase db) {
        MongoCollection<Document> accounts = db.getCollection("accounts");
        accounts.insertOne(new Document("_id", "alice").append("state", "open"));
        String id = "alice";
        // javadoc:start core/src/main/java/dev/consistencykit/core/RetryPolicy.java
        RetryPolicy retry = RetryPolicy.DEFAULT;
        UpdateOutcome outcome = retry.execute("payments", id, "freeze",
                () -> ConditionalUpdates.transition(accounts, id, Transition.of("state", "open", "frozen")).outcome());
        // javadoc:end
        assertThat(outcome).isEqualTo(UpdateOutcome.APPLIED);
    }

    @SuppressWarnings("try")   // the pool runs while open
    @Test
    void jobQueue(MongoDatabase db) {
        JobQueueSample.seed(db);
        // javadoc:start job-queue/src/main/java/dev/consistencykit/jobqueue/JobQueue.java
        JobQueue queue = JobQueue.builder(db)
                .handler("befriend", ctx -> {
                    Document p = ctx.payload();
                    ctx.applyOnce("users", p.get("a"), Updates.push("friends", p.get("b")));
                    ctx.applyOnce("users", p.get("b"), Updates.push("friends", p.get("a")));
                })
                .build();
        queue.ensureIndexes();
        queue.enqueue(JobRequest.of("befriend", new Document("a", "ann").append("b", "bob")));
        try (JobWorkers workers = queue.startWorkers(4)) {   // or queue.processNext() in your own loop
            awaitShutdown();
        }
        // javadoc:end
        queue.recover(Duration.ZERO);
        while (queue.processNext().isPresent()) {
            log.debug("processed a job the stopped pool had given back");
        }
        assertThat(db.getCollection("users").find(Filters.eq("_id", "ann")).first().getList("friends", String.class))
                .containsExactly("bob");
    }

    @Test
    void jobRequest() {
        // javadoc:start job-queue/src/main/java/dev/consistencykit/jobqueue/JobRequest.java
        JobRequest befriend = JobRequest.of("befriend", new Document("a", "ann").append("b", "bob"))
                .withId(OperationId.of("befriend-ann-bob")).withPriority(5).delayedBy(Duration.ofSeconds(10));
        // javadoc:end
        assertThat(befriend.id()).isEqualTo(OperationId.of("befriend-ann-bob"));
    }

    @Test
    void ledger(MongoDatabase db) {
        LedgerSample.seed(db);
        // javadoc:start log-reconciliation/src/main/java/dev/consistencykit/logreconciliation/Ledger.java
        Ledger ledger = Ledger.builder(db).overdraftFloor(0).build();
        ledger.ensureIndexes();
        ledger.append(LedgerTransaction.transfer("alice", "bob", 2_500));   // one insert
        long alice = ledger.balance("alice");                              // cache + later valid changes
        ledger.recover();                                                  // the committer, from any process
        ReconcileReport report = ledger.reconcile("alice", false);
        // javadoc:end
        assertThat(alice).isEqualTo(7_500);
        assertThat(report.consistent()).isTrue();
    }

    @Test
    void ledgerTransaction() {
        // javadoc:start log-reconciliation/src/main/java/dev/consistencykit/logreconciliation/LedgerTransaction.java
        LedgerTransaction.transfer("alice", "bob", 2_500);                                  // a two-account transfer
        LedgerTransaction.of(Change.debit("alice", 90), Change.credit("bob", 60), Change.credit("fees", 30)).asTransfer();
        LedgerTransaction.of(Change.credit("alice", 10_000)).withId(OperationId.of("deposit-17"));   // idempotent
        // javadoc:end
    }

    @Test
    void meters(MongoDatabase db) {
        MeterRegistry registry = new SimpleMeterRegistry();
        // javadoc:start micrometer/src/main/java/dev/consistencykit/micrometer/ConsistencyKitMeters.java
        TwoPhaseCommit payments = TwoPhaseCommit.builder(db).name("payments")
                .listener(ConsistencyKitMeters.listener(TwoPhaseListener.class, registry, "payments")).build();
        ConsistencyKitMeters.bind(registry, payments);
        // javadoc:end
        assertThat(registry.getMeters()).isNotEmpty();
    }

    @Test
    void observations(MongoDatabase db) {
        io.micrometer.observation.ObservationRegistry observationRegistry = io.micrometer.observation
                .ObservationRegistry.create();
        // javadoc:start micrometer/src/main/java/dev/consistencykit/micrometer/ConsistencyKitObservations.java
        TwoPhaseCommit payments = TwoPhaseCommit.builder(db).name("payments")
                .observer(new ConsistencyKitObservations(observationRegistry)).build();
        // javadoc:end
        assertThat(payments.pattern()).isEqualTo("two-phase");
    }

    @Test
    void masterUpdate(MongoDatabase db) {
        SyncFlagSample.seed(db);
        SyncFlag sync = SyncFlag.builder(db).master("users", "name")
                .target(SyncTarget.in("comments", "authorId").copy("name", "authorName")).build();
        String requestId = "req-7";
        // javadoc:start sync-flag/src/main/java/dev/consistencykit/syncflag/MasterUpdate.java
        sync.apply(MasterUpdate.of("ann", Updates.set("name", "Ann Smith")));
        sync.apply(MasterUpdate.of("ann", Updates.set("name", "Ann Smith")).withId(OperationId.of(requestId)));
        // javadoc:end
        assertThat(db.getCollection("comments").find().first().getString("authorName")).isEqualTo("Ann Smith");
    }

    @Test
    void syncFlag(MongoDatabase db) {
        SyncFlagSample.seed(db);
        // javadoc:start sync-flag/src/main/java/dev/consistencykit/syncflag/SyncFlag.java
        SyncFlag sync = SyncFlag.builder(db)
                .master("users", "name")
                .target(SyncTarget.in("comments", "authorId").copy("name", "authorName"))
                .target(SyncTarget.in("posts", "authorId").inArray("comments").copy("name", "authorName"))
                .build();
        sync.ensureIndexes();
        sync.update("ann", Updates.set("name", "Ann Smith"));   // master, then every copy
        sync.recover();                                         // periodically: repairs after crashes
        // javadoc:end
        assertThat(db.getCollection("comments").find().first().getString("authorName")).isEqualTo("Ann Smith");
    }

    @Test
    void syncTarget() {
        // javadoc:start sync-flag/src/main/java/dev/consistencykit/syncflag/SyncTarget.java
        SyncTarget.in("comments", "authorId").copy("name", "authorName");                      // one copy per document
        SyncTarget.in("posts", "authorId").inArray("comments").copy("name", "authorName");    // copies in posts.comments[]
        // javadoc:end
    }

    @Test
    void indexCoverage(MongoTarget target, MongoDatabase db) {
        seedAccounts(db);
        TwoPhaseCommit strategy = strategy(db);
        // javadoc:start testkit/src/main/java/dev/consistencykit/testkit/IndexCoverage.java
        try (IndexCoverage coverage = IndexCoverage.attach(target, db.getName())) {
            strategy.ensureIndexes();
            runWorkload(strategy);
            assertThat(coverage.uncovered(db)).isEmpty();
        }
        // javadoc:end
    }

    @Test
    void readBounds(MongoTarget target, MongoDatabase db) {
        seedAccounts(db);
        TwoPhaseCommit strategy = strategy(db);
        strategy.ensureIndexes();
        // javadoc:start testkit/src/main/java/dev/consistencykit/testkit/ReadBounds.java
        try (ReadBounds bounds = ReadBounds.attach(target, db.getName())) {
            strategy.interrupted(Duration.ZERO, 100);   // what a page polls
            assertThat(bounds.unbounded(Set.of())).isEmpty();
        }
        // javadoc:end
    }

    @Test
    void shardTargeting(MongoTarget target, MongoDatabase db) {
        seedAccounts(db);
        TwoPhaseCommit strategy = strategy(db);
        strategy.ensureIndexes();
        // javadoc:start testkit/src/main/java/dev/consistencykit/testkit/ShardTargeting.java
        try (ShardTargeting targeting = ShardTargeting.attach(target, db.getName())) {
            strategy.transfer(transfer);
            targeting.calls(db).forEach(call -> log.info("{}", call));   // update accounts: 1 shard(s)
        }
        // javadoc:end
    }

    @Test
    void dashboard(MongoDatabase database) {
        TwoPhaseCommit.on(database).ensureIndexes();
        // javadoc:start dashboard/src/main/java/dev/consistencykit/dashboard/Dashboard.java
        Dashboard dashboard = Dashboard.of(database, new DashboardSettings());
        try (DashboardHttpServer server = DashboardHttpServer.start(dashboard,
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            log.info("the dashboard: {}", server.uri());   // the page; its API below it, server.uri() + "api/overview"
        }
        // javadoc:end
    }

    @Test
    void faultyNetwork(MongoTarget target) throws Exception {
        // javadoc:start testkit/src/main/java/dev/consistencykit/testkit/FaultyNetwork.java
        try (FaultyNetwork network = FaultyNetwork.inFrontOf(target);
             MongoClient client = MongoClients.create(network.connectionString())) {
            client.getDatabase("admin").runCommand(new Document("ping", 1));   // connected
            network.dropNextRequests(1);      // the next command's connection drops before it is sent on
            assertThatThrownBy(() -> client.getDatabase("shop").runCommand(new Document("count", "orders")))
                    .isInstanceOf(MongoSocketException.class);   // runCommand is never retried by the driver
        }
        // javadoc:end
    }

    @Test
    void serverContract(MongoClient client) {
        // javadoc:start testkit/src/main/java/dev/consistencykit/testkit/contract/ServerContract.java
        List<CheckResult> results = ServerContract.runAll(client);
        results.forEach(r -> log.info("{}", r));   // PASS conditional-update-atomicity: ...
        // javadoc:end
        assertThat(results).isNotEmpty();
    }

    @Test
    void embeddedMongo() {
        // javadoc:start embedded-server/src/main/java/dev/consistencykit/embedded/EmbeddedMongo.java
        try (EmbeddedMongo server = EmbeddedMongo.start();
             MongoClient client = MongoClients.create(server.connectionString())) {
            client.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1));
        }
        // javadoc:end
    }

    @Test
    void chaosRunner(MongoClient client) {
        // javadoc:start testkit/src/main/java/dev/consistencykit/testkit/ChaosRunner.java
        ChaosRunner chaos = ChaosRunner.builder(client)
                .name("transfer").workers(4).operationsPerWorker(5).faultRate(0.05)
                .workload(new Transfers())     // each operation with a random of its own, seeded from the run's
                .build();
        ChaosRunner.Summary summary = chaos.runSeeds(1, 5);
        assertThat(summary.failures()).isEmpty();
        // javadoc:end
    }

    @Test
    void contendedRecovery(MongoClient client) {
        // javadoc:start testkit/src/main/java/dev/consistencykit/testkit/ContendedRecovery.java
        List<String> problems = ContendedRecovery.check(client, new Transfers(), 3);
        assertThat(problems).isEmpty();
        // javadoc:end
    }

    @Test
    void faultMatrix(MongoTarget target) {
        try (FaultyNetwork network = FaultyNetwork.inFrontOf(target);
             MongoClient client = MongoClients.create(network.connectionString())) {
            MongoDatabase db = client.getDatabase(MongoTarget.freshDatabaseName("javadocmatrix"));
            seedAccounts(db);
            TwoPhaseCommit payments = TwoPhaseCommit.builder(db).operationTimeout(Duration.ofSeconds(2)).build();
            // javadoc:start testkit/src/main/java/dev/consistencykit/testkit/FaultMatrix.java
            List<String> violations = FaultMatrix.builder(network)
                    .bound(Duration.ofSeconds(6))
                    .call("transfer", () -> payments.transfer(Transfer.of(OperationId.of("t-9"), "alice", "bob", 1)))
                    .call("status", payments::status)
                    .run();
            // javadoc:end
            assertThat(violations).isEmpty();
            db.drop();
        }
    }

    @Test
    void faultInjector(MongoDatabase db) {
        seedAccounts(db);
        // javadoc:start testkit/src/main/java/dev/consistencykit/testkit/FaultInjector.java
        FaultInjector injector = FaultInjector.at(3, FaultMode.CRASH_AFTER);
        assertThatThrownBy(() -> strategy(injector.wrap(db)).transfer(transfer)).isInstanceOf(InjectedCrash.class);
        // write #3 is on the server; recover with a fresh instance on the plain database
        // javadoc:end
        strategy(db).recover(Duration.ZERO);
        assertThat(checkMoney(db)).isEmpty();
    }

    @Test
    void roundTripCounter(MongoTarget target, MongoDatabase database) {
        seedAccounts(database);
        TwoPhaseCommit strategy = strategy(database);
        // javadoc:start testkit/src/main/java/dev/consistencykit/testkit/RoundTripCounter.java
        try (RoundTripCounter counter = RoundTripCounter.attach(target, database.getName())) {
            for (int i = 0; i < 100; i++) strategy.transfer(change(i));
            double perOp = counter.snapshot().commandsPer(100);
            assertThat(perOp).isGreaterThan(1);
        }
        // javadoc:end
    }

    @Test
    void twoPhaseTransaction(MongoDatabase db) {
        TwoPhaseSample.seed(db);
        // javadoc:start two-phase/src/main/java/dev/consistencykit/twophase/TwoPhaseTransaction.java
        TwoPhaseTransaction tx = TwoPhaseTransaction.of(OperationId.of("order-42"),
                Participant.on("stock", "sku-1").when(Filters.gte("free", 2)).prepare(Updates.inc("free", -2))
                        .rollback(Updates.inc("free", 2)),
                Participant.on("orders", "order-42").when(Filters.eq("status", "new")).commit(Updates.set("status", "paid")));
        // javadoc:end
        TwoPhaseCommit.on(db).apply(tx);
        assertThat(db.getCollection("stock").find().first().getInteger("free")).isEqualTo(3);
    }

    @Test
    void twoPhaseCommit(MongoDatabase database) {
        TwoPhaseSample.seed(database);
        // javadoc:start two-phase/src/main/java/dev/consistencykit/twophase/TwoPhaseCommit.java
        TwoPhaseCommit payments = TwoPhaseCommit.builder(database).name("payments").build();
        payments.ensureIndexes();
        payments.transfer(Transfer.of(OperationId.of("t-1001"), "alice", "bob", 2_500));  // 25.00, 7 round trips
        payments.recover(Duration.ofMinutes(1));   // at start-up and periodically, from any number of processes
        // javadoc:end
        assertThat(database.getCollection("accounts").find(Filters.eq("_id", "bob")).first().getLong("balance"))
                .isEqualTo(2_500L);
    }

    @Test
    void participant(MongoDatabase db) {
        TwoPhaseSample.seed(db);
        // javadoc:start two-phase/src/main/java/dev/consistencykit/twophase/Participant.java
        Participant debit = Participant.on("accounts", "alice")
                .when(Filters.gte("balance", 100L))
                .prepare(Updates.inc("balance", -100L))
                .rollback(Updates.inc("balance", 100L));
        // javadoc:end
        TwoPhaseCommit.on(db).apply(TwoPhaseTransaction.of(OperationId.of("debit-1"), debit));
        assertThat(db.getCollection("accounts").find(Filters.eq("_id", "alice")).first().getLong("balance"))
                .isEqualTo(9_900L);
    }

    @Test
    void versionedStore(MongoDatabase db) {
        // javadoc:start versioning/src/main/java/dev/consistencykit/versioning/VersionedStore.java
        VersionedStore store = VersionedStore.builder(db).retention(Retention.keepLast(100)).build();
        store.ensureIndexes();
        store.createRoot("catalogue");
        VersionedTree tree = store.read("catalogue");                   // version 0, no items
        store.commit(ChangeSet.on("catalogue", tree.version())
                .put("shoes", new Document("price", 4_900)).put("hats", new Document("price", 1_500)).build());
        store.update("catalogue", (current, change) -> change.delete("hats"));   // re-reads and retries on conflict
        VersionedTree v1 = store.readAsOf("catalogue", 1);              // time travel
        // javadoc:end
        assertThat(v1.item("hats")).isPresent();
        assertThat(store.read("catalogue").item("hats")).isEmpty();
    }

    @Test
    void changeSet(MongoDatabase db) {
        VersionedStore store = VersionedStore.on(db);
        store.ensureIndexes();
        store.createRoot("catalogue");
        VersionedTree tree = store.read("catalogue");
        // javadoc:start versioning/src/main/java/dev/consistencykit/versioning/ChangeSet.java
        ChangeSet change = ChangeSet.on("catalogue", tree.version())
                .put("shoes", new Document("title", "Shoes").append("price", 4_900))
                .delete("hats")
                .build();
        // javadoc:end
        store.commit(change);
        assertThat(store.read("catalogue").item("shoes")).isPresent();
    }

}
