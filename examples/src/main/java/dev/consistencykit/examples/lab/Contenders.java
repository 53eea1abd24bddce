package dev.consistencykit.examples.lab;

import static com.mongodb.client.model.Filters.eq;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Predicate;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.testkit.Accounts;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TransferVariant;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.twophase.TwoPhaseConfig;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.VersionedStore;
import dev.consistencykit.versioning.VersionedTree;

/** Every pattern that can carry the comparison's workloads, and the naive baseline. */
public final class Contenders {

    /** Accounts of the bank-transfer workload. */
    static final int ACCOUNTS = 10;
    /** Each account's opening balance, in cents. */
    static final long OPENING = 10_000;
    static final long TOTAL = ACCOUNTS * OPENING;
    private static final String BANK = TwoPhaseConfig.DEFAULT_ACCOUNTS_COLLECTION;

    private Contenders() {
    }

    /** One pattern (or the naive loop) on one workload, as the comparison drives it. */
    public interface Contender {

        /** The entry's name in the comparison ({@code two-phase (reserve then credit)}…). */
        String name();

        /** The pattern's CLI name, or {@code naive}. */
        String pattern();

        /** {@code bank-transfer} or {@code rename}. */
        String workload();

        /** Creates the workload's documents and indexes in a fresh database. */
        void setup(MongoDatabase db);

        /** The pattern as one process uses it: built once on {@code db} (which may crash it), then used many times. */
        Instance start(MongoDatabase db);

        /** The workload's invariants after recovery, read back. */
        List<String> invariants(MongoDatabase db);
    }

    /** One process's instance of a contender. */
    public interface Instance {

        /** One operation (a transfer, a rename). */
        void operation(Random random);

        /** The pattern's recovery (staleness {@code staleAfter}); nothing for the naive loop. */
        void recover(Duration staleAfter);

        /** One read a concurrent reader makes; false when what it saw breaks the workload's invariant. */
        boolean readIsConsistent(Random random);
    }

    /** The rename workload's users, each with 5 comments carrying her name. */
    private static final int RENAMED_USERS = 10;

    /** Reads a master, then its comments: consistent when every comment shows the master's name. */
    private static boolean copiesMatchMaster(MongoDatabase db, Random random) {
        String user = "u" + random.nextInt(RENAMED_USERS);
        String name = db.getCollection("users").find(eq("_id", user)).first().getString("name");
        for (Document c : db.getCollection("comments").find(eq("authorId", user))) {
            if (!name.equals(c.getString("authorName"))) {
                return false;
            }
        }
        return true;
    }

    /** The bank-transfer contenders, then the rename contenders. */
    public static List<Contender> all() {
        return List.of(new Naive(), new TwoPhase(TransferVariant.RESERVE_THEN_CREDIT),
                new TwoPhase(TransferVariant.APPLY_AT_PREPARE), new LedgerTransfers(), new QueuedTransfers(),
                new VersionedAccounts(), new SyncFlagRename(), new QueuedRename());
    }

    private static int[] pair(Random random) {
        int a = random.nextInt(ACCOUNTS);
        return new int[] {a, (a + 1 + random.nextInt(ACCOUNTS - 1)) % ACCOUNTS};
    }

    private static long amount(Random random) {
        return 1 + random.nextInt(500);
    }

    /** Sums every account in one query. */
    private static boolean bankSumIsTotal(MongoDatabase db) {
        long sum = 0;
        for (Document a : db.getCollection(BANK).find()) {
            sum += ((Number) a.get(Accounts.BALANCE)).longValue();
        }
        return sum == TOTAL;
    }

    /** An instance from three actions. */
    private record Actions(Consumer<Random> operation, Consumer<Duration> recovery, Predicate<Random> read)
            implements Instance {

        @Override
        public void operation(Random random) {
            operation.accept(random);
        }

        @Override
        public void recover(Duration staleAfter) {
            recovery.accept(staleAfter);
        }

        @Override
        public boolean readIsConsistent(Random random) {
            return read.test(random);
        }
    }

    private abstract static class Bank implements Contender {

        @Override
        public String workload() {
            return "bank-transfer";
        }

        @Override
        public void setup(MongoDatabase db) {
            Accounts.seed(db, BANK, Accounts.named(ACCOUNTS, OPENING));
        }
    }

    /** The article's cautionary example: two unguarded updates, no record, no recovery. */
    static final class Naive extends Bank {

        @Override
        public String name() {
            return "naive (two plain updates)";
        }

        @Override
        public String pattern() {
            return "naive";
        }

        @Override
        public Instance start(MongoDatabase db) {
            return new Actions(random -> {
                int[] p = pair(random);
                long amount = amount(random);
                db.getCollection(BANK).updateOne(eq("_id", "a" + p[0]), Updates.inc(Accounts.BALANCE, -amount));
                db.getCollection(BANK).updateOne(eq("_id", "a" + p[1]), Updates.inc(Accounts.BALANCE, amount));
            }, staleAfter -> {
                // nothing records what was in flight, so nothing can be finished or undone
            }, random -> bankSumIsTotal(db));
        }

        @Override
        public List<String> invariants(MongoDatabase db) {
            List<String> problems = new ArrayList<>();
            long sum = Accounts.balances(db, BANK).values().stream().mapToLong(Long::longValue).sum();
            if (sum != TOTAL) {
                problems.add("money not conserved: " + sum + " != " + TOTAL);
            }
            return problems;
        }
    }

    static final class TwoPhase extends Bank {

        private final TransferVariant variant;

        TwoPhase(TransferVariant variant) {
            this.variant = variant;
        }

        @Override
        public String name() {
            return "two-phase (" + (variant == TransferVariant.RESERVE_THEN_CREDIT ? "reserve then credit"
                    : "apply at prepare") + ")";
        }

        @Override
        public String pattern() {
            return "two-phase";
        }

        @Override
        public void setup(MongoDatabase db) {
            super.setup(db);
            TwoPhaseCommit.on(db).ensureIndexes();
        }

        @Override
        public Instance start(MongoDatabase db) {
            TwoPhaseCommit tpc = TwoPhaseCommit.builder(db).transferVariant(variant)
                    .retryPolicy(PatternLab.FAST_RETRY).build();
            return new Actions(random -> {
                int[] p = pair(random);
                tpc.transfer(Transfer.of(OperationId.random(), "a" + p[0], "a" + p[1], amount(random)));
            }, tpc::recover, random -> bankSumIsTotal(db));
        }

        @Override
        public List<String> invariants(MongoDatabase db) {
            return TwoPhaseLab.invariants(db, Accounts.named(ACCOUNTS, OPENING),
                    variant == TransferVariant.RESERVE_THEN_CREDIT);
        }
    }

    static final class LedgerTransfers implements Contender {

        @Override
        public String name() {
            return "log reconciliation";
        }

        @Override
        public String pattern() {
            return "log-reconciliation";
        }

        @Override
        public String workload() {
            return "bank-transfer";
        }

        @Override
        public void setup(MongoDatabase db) {
            LedgerLab.open(db, ACCOUNTS, OPENING);
        }

        /** The reader reads each account's exact {@code balance()}, one after the other, as an application would. */
        @Override
        public Instance start(MongoDatabase db) {
            Ledger ledger = LedgerLab.ledger(db);
            return new Actions(random -> {
                int[] p = pair(random);
                ledger.apply(LedgerTransaction.transfer("a" + p[0], "a" + p[1], amount(random)));
            }, ledger::recover, random -> {
                long sum = 0;
                for (int i = 0; i < ACCOUNTS; i++) {
                    sum += ledger.balance("a" + i);
                }
                return sum == TOTAL;
            });
        }

        @Override
        public List<String> invariants(MongoDatabase db) {
            return LedgerLab.invariants(db, Accounts.named(ACCOUNTS, OPENING));
        }
    }

    /** A transfer job whose debit and credit are each guarded by the job's marker on the account. */
    static final class QueuedTransfers extends Bank {

        private static JobQueue queue(MongoDatabase db) {
            return JobQueue.builder(db).retryPolicy(PatternLab.FAST_RETRY).maxAttempts(50)
                    .retryBackoff(Duration.ofMillis(1), Duration.ofMillis(5))
                    .handler("transfer", ctx -> {
                        Document p = ctx.payload();
                        ctx.applyOnce(BANK, p.get("from"), Updates.inc(Accounts.BALANCE, -p.getLong("amount")));
                        ctx.applyOnce(BANK, p.get("to"), Updates.inc(Accounts.BALANCE, p.getLong("amount")));
                    }).build();
        }

        @Override
        public String name() {
            return "job queue (transfer job)";
        }

        @Override
        public String pattern() {
            return "job-queue";
        }

        @Override
        public void setup(MongoDatabase db) {
            super.setup(db);
            queue(db).ensureIndexes();
        }

        @Override
        public Instance start(MongoDatabase db) {
            JobQueue queue = queue(db);
            return new Actions(random -> {
                int[] p = pair(random);
                queue.enqueue(JobRequest.of("transfer", new Document("from", "a" + p[0]).append("to", "a" + p[1])
                        .append("amount", amount(random))));
                queue.processNext();
            }, queue::recover, random -> bankSumIsTotal(db));
        }

        @Override
        public List<String> invariants(MongoDatabase db) {
            List<String> problems = new ArrayList<>();
            Map<Object, Long> effects = new HashMap<>();
            for (Document job : db.getCollection("jobs").find()) {
                if (!"DONE".equals(job.getString("state"))) {
                    problems.add("job " + job.get("_id") + " ended " + job.getString("state"));
                    continue;
                }
                Document p = job.get("payload", Document.class);
                effects.merge(p.getString("from"), -p.getLong("amount"), Long::sum);
                effects.merge(p.getString("to"), p.getLong("amount"), Long::sum);
            }
            problems.addAll(Accounts.checkMoney(Accounts.balances(db, BANK), Accounts.named(ACCOUNTS, OPENING),
                    effects, false));
            return problems;
        }
    }

    /** The accounts as the versioned items of one root: a transfer is one change set of two items. */
    static final class VersionedAccounts implements Contender {

        private static final String ROOT = "bank";

        private static VersionedStore store(MongoDatabase db) {
            return VersionedStore.builder(db).retryPolicy(PatternLab.FAST_RETRY).conflictAttempts(50).build();
        }

        @Override
        public String name() {
            return "versioned documents";
        }

        @Override
        public String pattern() {
            return "versioning";
        }

        @Override
        public String workload() {
            return "bank-transfer";
        }

        @Override
        public void setup(MongoDatabase db) {
            VersionedStore store = store(db);
            store.ensureIndexes();
            store.createRoot(ROOT);
            ChangeSet.Builder accounts = ChangeSet.on(ROOT, 0);
            for (int i = 0; i < ACCOUNTS; i++) {
                accounts.put("a" + i, new Document(Accounts.BALANCE, OPENING));
            }
            store.commit(accounts.build());
        }

        @Override
        public Instance start(MongoDatabase db) {
            VersionedStore store = store(db);
            return new Actions(random -> {
                int[] p = pair(random);
                long amount = amount(random);
                store.update(ROOT, (tree, change) -> {
                    change.put("a" + p[0], new Document(Accounts.BALANCE, balance(tree, "a" + p[0]) - amount));
                    change.put("a" + p[1], new Document(Accounts.BALANCE, balance(tree, "a" + p[1]) + amount));
                });
            }, store::recover, random -> sum(store.read(ROOT)) == TOTAL);
        }

        private static long balance(VersionedTree tree, String account) {
            return tree.item(account).orElseThrow().getLong(Accounts.BALANCE);
        }

        private static long sum(VersionedTree tree) {
            return tree.items().values().stream().mapToLong(d -> d.getLong(Accounts.BALANCE)).sum();
        }

        @Override
        public List<String> invariants(MongoDatabase db) {
            List<String> problems = new ArrayList<>();
            VersionedStore store = store(db);
            if (store.status().inFlight() != 0) {
                problems.add(store.status().inFlight() + " change sets still staged");
            }
            VersionedTree tree = store.read(ROOT);
            for (long v = 1; v <= tree.version(); v++) {
                long total = sum(store.readAsOf(ROOT, v));
                if (total != TOTAL) {
                    problems.add("version " + v + " holds " + total + ", not " + TOTAL);
                }
            }
            return problems;
        }
    }

    /** A user's rename copied into her comments: the reader compares a master with its copies. */
    static final class SyncFlagRename implements Contender {

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
            return new Actions(random -> sync.update("u" + random.nextInt(USERS),
                    Updates.set("name", "Name " + renames.incrementAndGet())), sync::recover,
                    random -> copiesMatchMaster(db, random));
        }

        @Override
        public List<String> invariants(MongoDatabase db) {
            return SyncFlagLab.invariants(db);
        }
    }

    /**
     * A rename job: it sets the master's name and version once (its marker), then copies the master's current name and
     * version to every comment whose copy is older, so two renames processed out of order never leave the older name.
     */
    static final class QueuedRename implements Contender {

        private final AtomicLong renames = new AtomicLong();

        private static JobQueue queue(MongoDatabase db) {
            return JobQueue.builder(db).retryPolicy(PatternLab.FAST_RETRY).maxAttempts(50)
                    .retryBackoff(Duration.ofMillis(1), Duration.ofMillis(5))
                    .handler("rename", ctx -> {
                        Object user = ctx.payload().get("user");
                        ctx.applyOnce("users", user, Updates.combine(Updates.set("name", ctx.payload().get("name")),
                                Updates.inc("nameVersion", 1L)));
                        Document master = db.getCollection("users").find(eq("_id", user)).first();
                        long version = master.getLong("nameVersion");
                        db.getCollection("comments").updateMany(Filters.and(eq("authorId", user),
                                Filters.or(Filters.exists("nameVersion", false), Filters.lt("nameVersion", version))),
                                Updates.combine(Updates.set("authorName", master.getString("name")),
                                        Updates.set("nameVersion", version)));
                    }).build();
        }

        @Override
        public String name() {
            return "job queue (rename job)";
        }

        @Override
        public String pattern() {
            return "job-queue";
        }

        @Override
        public String workload() {
            return "rename";
        }

        @Override
        public void setup(MongoDatabase db) {
            SyncFlagLab.seed(db, RENAMED_USERS, 5);
            db.getCollection("users").updateMany(new Document(), Updates.set("nameVersion", 0L));
            db.getCollection("comments").createIndex(new Document("authorId", 1));
            queue(db).ensureIndexes();
        }

        @Override
        public Instance start(MongoDatabase db) {
            JobQueue queue = queue(db);
            return new Actions(random -> {
                queue.enqueue(JobRequest.of("rename", new Document("user", "u" + random.nextInt(RENAMED_USERS))
                        .append("name", "Name " + renames.incrementAndGet())));
                queue.processNext();
            }, queue::recover, random -> copiesMatchMaster(db, random));
        }

        @Override
        public List<String> invariants(MongoDatabase db) {
            List<String> problems = new ArrayList<>();
            for (Document job : db.getCollection("jobs").find()) {
                if (!"DONE".equals(job.getString("state"))) {
                    problems.add("job " + job.get("_id") + " ended " + job.getString("state"));
                }
            }
            for (Document user : db.getCollection("users").find()) {
                long stale = db.getCollection("comments").countDocuments(Filters.and(eq("authorId", user.get("_id")),
                        Filters.ne("authorName", user.getString("name"))));
                if (stale > 0) {
                    problems.add(stale + " comments of " + user.get("_id") + " do not show " + user.getString("name"));
                }
            }
            return problems;
        }
    }
}
