package dev.consistencykit.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.Maintenance;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.InjectedCrash;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.VersionedStore;

/** A database left with one interrupted operation per pattern: inspect lists all five, recover repairs them. */
@ExtendWith(MongoTestExtension.class)
class InspectRecoverCommandTest {

    private static String uri() {
        return MongoTarget.fromEnvironment().connectionString().getConnectionString();
    }

    /** A process that dies right after its first {@code method} write on {@code collection} (any, if null). */
    private static FaultInjector crashAfter(String method, String collection) {
        return FaultInjector.atWrite(method, collection, 1, FaultMode.CRASH_AFTER);
    }

    /** Every pattern's collections, each name with {@code prefix} (none: the defaults), instances named likewise. */
    private record Names(String prefix) {

        private String c(String name) {
            return prefix + name;
        }

        SyncFlag sync(MongoDatabase db) {
            SyncFlag.Builder b = SyncFlag.builder(db).master(c("users"), "name")
                    .target(SyncTarget.in(c("comments"), "authorId").copy("name", "authorName"));
            return (prefix.isEmpty() ? b : b.name(prefix + "profiles")).build();
        }

        JobQueue queue(MongoDatabase db) {
            JobQueue.Builder b = JobQueue.builder(db).handler("befriend", ctx -> {
                ctx.applyOnce(c("users"), ctx.payload().get("a"), Updates.push("friends", ctx.payload().get("b")));
                ctx.applyOnce(c("users"), ctx.payload().get("b"), Updates.push("friends", ctx.payload().get("a")));
            });
            return (prefix.isEmpty() ? b : b.name(prefix + "social").collection(c("jobs"))).build();
        }

        TwoPhaseCommit payments(MongoDatabase db) {
            TwoPhaseCommit.Builder b = TwoPhaseCommit.builder(db);
            return (prefix.isEmpty() ? b : b.name(prefix + "payments").transactionsCollection(c("transactions"))
                    .accountsCollection(c("accounts"))).build();
        }

        Ledger ledger(MongoDatabase db) {
            Ledger.Builder b = Ledger.builder(db);
            return (prefix.isEmpty() ? b : b.name(prefix + "books").collections(c("ledger"), c("ledgerAccounts"),
                    c("ledgerArchive"))).build();
        }

        VersionedStore store(MongoDatabase db) {
            VersionedStore.Builder b = VersionedStore.builder(db);
            return (prefix.isEmpty() ? b : b.name(prefix + "catalogues").collections(c("versionRoots"),
                    c("versionItems"), c("versionHistory"))).build();
        }

        /** One interrupted operation of each pattern, each left by a process that died mid-way. */
        void interruptEveryPattern(MongoDatabase db) {
            db.getCollection(c("users")).insertMany(List.of(new Document("_id", "ann").append("name", "Ann")
                    .append("friends", List.of()), new Document("_id", "bob").append("name", "Bob")
                    .append("friends", List.of())));
            db.getCollection(c("comments")).insertOne(new Document("_id", "c1").append("authorId", "ann")
                    .append("authorName", "Ann"));
            db.getCollection(c("accounts")).insertMany(List.of(new Document("_id", "alice").append("balance", 100L),
                    new Document("_id", "bob").append("balance", 100L)));
            for (String a : List.of("alice", "bob")) {
                db.getCollection(c("ledgerAccounts")).insertOne(new Document("_id", a).append("balance", 100L)
                        .append("seqId", 0L).append("checkpoint", new Document("seqId", 0L)
                                .append("balance", 100L)));
            }
            sync(db).ensureIndexes();
            queue(db).ensureIndexes();
            payments(db).ensureIndexes();
            ledger(db).ensureIndexes();
            store(db).ensureIndexes();
            store(db).createRoot("catalogue");
            queue(db).enqueue(JobRequest.of("befriend", new Document("a", "ann").append("b", "bob")));

            // each process dies right after the write named here, wherever it falls among the pattern's writes
            List<Runnable> crashes = List.of(
                    () -> sync(crashAfter("findOneAndUpdate", c("users")).wrap(db)).update("ann",
                            Updates.set("name", "Ann Smith")),
                    () -> queue(crashAfter("findOneAndUpdate", c("users")).wrap(db)).processNext(),
                    () -> payments(crashAfter("bulkWrite", c("accounts")).wrap(db)).transfer(Transfer.of(
                            OperationId.of("t1"), "alice", "bob", 30)),
                    () -> ledger(crashAfter(null, c("ledger")).wrap(db)).apply(LedgerTransaction.transfer("alice",
                            "bob", 30).withId(OperationId.of("l1"))),
                    () -> store(crashAfter(null, c("versionItems")).wrap(db)).commit(ChangeSet.on("catalogue", 0)
                            .id(OperationId.of("v1")).put("shoes", new Document("price", 1)).build()));
            for (Runnable crash : crashes) {
                assertThatThrownBy(crash::run).isInstanceOf(InjectedCrash.class);
            }
        }
    }

    private static final Names DEFAULT_NAMES = new Names("");

    static void interruptEveryPattern(MongoDatabase db) {
        DEFAULT_NAMES.interruptEveryPattern(db);
    }

    @Test
    void shouldFindEveryPatternUnderCollectionNamesOfItsOwnAndRepairIt(MongoDatabase db) {
        Names names = new Names("app_");
        names.interruptEveryPattern(db);

        CliTestSupport.Run inspect = CliTestSupport.run("--uri", uri(), "--json", "inspect", "--database",
                db.getName(), "--stale-after", "0");
        CliTestSupport.Run recover = CliTestSupport.run("--uri", uri(), "--json", "recover", "--database",
                db.getName(), "--stale-after", "0");
        CliTestSupport.Run after = CliTestSupport.run("--uri", uri(), "--json", "inspect", "--database",
                db.getName(), "--stale-after", "0");

        assertThat(db.listCollectionNames().into(new java.util.ArrayList<>()))
                .noneMatch(n -> List.of("transactions", "jobs", "ledger", "versionRoots").contains(n));
        Document listed = inspect.lastLineJson();
        assertThat(listed.getList("patterns", String.class)).as(inspect.out())
                .containsExactlyInAnyOrder("sync-flag", "job-queue", "two-phase", "log-reconciliation", "versioning");
        assertThat(listed.getInteger("count")).as(inspect.out()).isEqualTo(5);
        assertThat(inspect.out()).contains("two-phase 'app_payments'").contains("job-queue 'app_social'")
                .contains("log-reconciliation 'app_books'").contains("versioning 'app_catalogues'")
                .contains("sync-flag 'app_profiles'");
        assertThat(recover.lastLineJson().getInteger("repaired")).as(recover.out()).isGreaterThanOrEqualTo(5);
        assertThat(after.lastLineJson().getInteger("count")).as(after.out()).isZero();
        assertThat(after.exitCode()).isZero();
        assertThat(names.payments(db).status().inFlight()).isZero();
        assertThat(names.ledger(db).status().inFlight()).isZero();
    }

    @Test
    void shouldListOneInterruptedOperationPerPatternThenRepairThemAll(MongoDatabase db) {
        interruptEveryPattern(db);

        CliTestSupport.Run before = CliTestSupport.run("--uri", uri(), "--json", "inspect", "--database", db.getName(),
                "--stale-after", "0");
        CliTestSupport.Run fresh = CliTestSupport.run("--uri", uri(), "--json", "inspect", "--database", db.getName(),
                "--stale-after", "1h");
        CliTestSupport.Run recover = CliTestSupport.run("--uri", uri(), "--json", "recover", "--database",
                db.getName(), "--stale-after", "0s");
        CliTestSupport.Run after = CliTestSupport.run("--uri", uri(), "--json", "inspect", "--database", db.getName(),
                "--stale-after", "0");

        assertThat(before.exitCode()).as("operations to act on: " + before.err()).isEqualTo(ExitCodes.PROBLEMS_FOUND);
        assertThat(fresh.exitCode()).as(fresh.err()).isZero();
        Document listed = before.lastLineJson();
        assertThat(listed.getInteger("count")).as(before.out()).isEqualTo(5);
        assertThat(listed.getList("interrupted", Document.class)).extracting(d -> d.getString("pattern"))
                .containsExactlyInAnyOrder("sync-flag", "job-queue", "two-phase", "log-reconciliation", "versioning");
        assertThat(listed.getList("interrupted", Document.class)).extracting(d -> d.getString("id"))
                .contains("ann", "t1", "l1", "v1");
        assertThat(fresh.lastLineJson().getInteger("count")).as("nothing is an hour old").isZero();
        assertThat(recover.exitCode()).as(recover.err()).isZero();
        assertThat(recover.lastLineJson().getInteger("repaired")).as(recover.out()).isGreaterThanOrEqualTo(5);
        assertThat(after.lastLineJson().getInteger("count")).as(after.out()).isZero();
        assertThat(after.exitCode()).isZero();
        assertThat(db.getCollection("comments").find().first().getString("authorName")).isEqualTo("Ann Smith");
        assertThat(db.getCollection("jobs").find().first().getString("state")).isEqualTo("todo");
        assertThat(db.getCollection("accounts").find().into(new java.util.ArrayList<>())).extracting(d -> d.getLong(
                "balance")).containsOnly(100L);
        assertThat(Ledger.on(db).status().inFlight()).isZero();
        assertThat(VersionedStore.on(db).read("catalogue").items()).containsOnlyKeys("shoes");
    }

    /** One process's maintenance runner: every pattern, taking over whatever is in flight. */
    private static Maintenance runner(MongoDatabase db) {
        return Maintenance.builder()
                .strategy(SyncFlag.builder(db).master("users", "name").staleAfter(Duration.ofMillis(1))
                        .target(SyncTarget.in("comments", "authorId").copy("name", "authorName")).build())
                .strategy(JobQueue.builder(db).staleAfter(Duration.ofMillis(1)).handler("befriend", ctx -> { }).build())
                .strategy(TwoPhaseCommit.builder(db).staleAfter(Duration.ofMillis(1)).build())
                .strategy(Ledger.builder(db).staleAfter(Duration.ofMillis(1)).build())
                .strategy(VersionedStore.builder(db).staleAfter(Duration.ofMillis(1)).build())
                .build();
    }

    @Test
    void shouldRepairEveryPatternWhenTwoProcessesRunTheirMaintenanceAtOnce(MongoDatabase db) throws Exception {
        interruptEveryPattern(db);
        Maintenance first = runner(db);
        Maintenance second = runner(db);
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<?>> runs = List.of(pool.submit(() -> {
                go.await();
                first.runOnce();
                return null;
            }), pool.submit(() -> {
                go.await();
                second.runOnce();
                return null;
            }));
            go.countDown();
            for (Future<?> run : runs) {
                run.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }

        for (Maintenance m : List.of(first, second)) {
            assertThat(m.health()).allSatisfy(h -> assertThat(h.consecutiveFailures()).as(h.name()).isZero());
        }
        assertThat(db.getCollection("comments").find().first().getString("authorName")).isEqualTo("Ann Smith");
        assertThat(db.getCollection("users").countDocuments(Filters.exists("syncing"))).isZero();
        assertThat(db.getCollection("accounts").find().into(new java.util.ArrayList<>())).extracting(d -> d.getLong(
                "balance")).containsOnly(100L);
        assertThat(TwoPhaseCommit.on(db).status().inFlight()).isZero();
        assertThat(Ledger.on(db).status().inFlight()).isZero();
        assertThat(VersionedStore.on(db).read("catalogue").items()).containsOnlyKeys("shoes");
        // the crashed worker's job keeps its lease until it runs out (recovery requeues it then): never an effect
        // applied twice meanwhile
        for (Document user : db.getCollection("users").find()) {
            assertThat(user.getList("friends", Object.class)).as(user.toJson()).doesNotHaveDuplicates();
        }
    }

    @Test
    void shouldWriteNothingWhenInspecting(MongoDatabase db) {
        interruptEveryPattern(db);
        var snapshot = dev.consistencykit.testkit.DatabaseSnapshot.of(db);

        CliTestSupport.Run run = CliTestSupport.run("--uri", uri(), "inspect", "--database", db.getName(),
                "--stale-after", "0");

        assertThat(run.exitCode()).isEqualTo(ExitCodes.PROBLEMS_FOUND);
        assertThat(run.out()).contains("looked in database " + db.getName())
                .contains("5 operation(s) with no progress for 0s or more (--stale-after)").contains("flagged")
                .contains("staged");
        assertThat(dev.consistencykit.testkit.DatabaseSnapshot.of(db)).isEqualTo(snapshot);
        assertThat(db.getCollection("users").countDocuments(Filters.exists("syncing"))).isEqualTo(1);
    }

    @Test
    void shouldRefuseADatabaseThatDoesNotExistWithAUsageError(MongoDatabase db) {
        db.getCollection("touch").insertOne(new org.bson.Document("_id", 1));
        String uri = MongoTarget.fromEnvironment().connectionString().getConnectionString();
        CliTestSupport.Run inspect = CliTestSupport.run("--uri", uri, "inspect", "--database", db.getName() + "x");
        CliTestSupport.Run recover = CliTestSupport.run("--uri", uri, "--json", "recover", "--database",
                db.getName() + "x");

        assertThat(inspect.exitCode()).isEqualTo(2);
        assertThat(inspect.err()).contains("database " + db.getName() + "x does not exist")
                .contains(db.getName());
        assertThat(recover.exitCode()).isEqualTo(2);
        assertThat(recover.lastLineJson().getString("error")).contains("does not exist");
        assertThat(recover.lastLineJson().getInteger("exitCode")).isEqualTo(2);
    }

    @Test
    void shouldMentionOperationsYoungerThanTheThreshold(MongoDatabase db) {
        interruptEveryPattern(db);
        String uri = MongoTarget.fromEnvironment().connectionString().getConnectionString();

        CliTestSupport.Run inspect = CliTestSupport.run("--uri", uri, "--json", "inspect", "--database",
                db.getName());
        CliTestSupport.Run recover = CliTestSupport.run("--uri", uri, "recover", "--database", db.getName());

        assertThat(inspect.lastLineJson().getInteger("count")).isZero();
        assertThat(inspect.lastLineJson().get("youngerInFlight", Number.class).longValue()).isEqualTo(5L);
        assertThat(inspect.out()).contains("5 more in flight for less than 1m, not listed (--stale-after 0");
        assertThat(recover.out()).contains("examined 0").contains("still in flight")
                .contains("were younger than 1m");
    }

    @Test
    void shouldRefuseABadStalenessAndAMissingDatabaseName() {
        CliTestSupport.Run bad = CliTestSupport.run("--uri", uri(), "inspect", "--database", "x", "--stale-after",
                "soon");
        CliTestSupport.Run unnamed = CliTestSupport.run("--uri", uri(), "inspect");

        assertThat(bad.exitCode()).isEqualTo(2);
        assertThat(bad.err()).contains("'soon' is not a duration");
        assertThat(unnamed.exitCode()).isEqualTo(2);
        assertThat(unnamed.err()).contains("name the database with --database");
    }
}
