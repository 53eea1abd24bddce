package dev.consistencykit.examples.lab;

import static com.mongodb.client.model.Filters.eq;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerConfig;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.testkit.Accounts;
import dev.consistencykit.testkit.Workload;
import dev.consistencykit.twophase.ConsistentRead;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TransferVariant;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.twophase.TwoPhaseConfig;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.VersionedStore;
import dev.consistencykit.versioning.VersionedStoreConfig;
import dev.consistencykit.versioning.VersionedTree;

/** Every pattern that can carry the comparison's workloads, and the naive baseline. */
public final class Contenders {

    /** Accounts of the bank-transfer workload. */
    static final int ACCOUNTS = 10;
    /** Each account's opening balance, in cents. */
    static final long OPENING = 10_000;
    static final long TOTAL = ACCOUNTS * OPENING;
    private static final String BANK = TwoPhaseConfig.DEFAULT_ACCOUNTS_COLLECTION;
    private static final List<String> ACCOUNT_IDS = java.util.stream.IntStream.range(0, ACCOUNTS)
            .mapToObj(i -> "a" + i).toList();
    private static final String QUEUE_HAS_NO_CONSISTENT_READ = "a job's effects appear one document at a time until"
            + " it is done, and the queue offers no read that waits for them";

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

        /** One sentence: what a raw reader's anomalies mean for this pattern, and what its consistent read does. */
        String anomalies();

        /** How many background processes the README's configuration runs beside {@code writers} callers. */
        default int backgroundProcesses(int writers) {
            return 1;
        }

        /** Why the pattern offers no consistent read, or empty when it does. */
        default Optional<String> noConsistentRead() {
            return Optional.empty();
        }

        /**
         * The contender as the testkit's {@link Workload}, so that the crash explorer, the interleaving explorer and
         * the chaos runner run the comparison's workloads unchanged: seeding is {@link #setup}; one operation is one
         * process's instance making one {@link Instance#operation} and then the background work the README puts
         * beside it (the ledger's committer, the queue's worker) until none is left; recovery is a fresh process's
         * {@link Instance#recover} of everything in flight; the invariants are {@link #invariants}.
         */
        default Workload asWorkload() {
            Contender contender = this;
            return new Workload() {
                @Override
                public void seed(MongoDatabase database) {
                    contender.setup(database);
                }

                @Override
                public void operate(MongoDatabase database, Random random) {
                    Instance process = contender.start(database);
                    process.operation(random);
                    for (int pass = 0; pass < MAX_BACKGROUND_PASSES && process.background(); pass++) {
                        // each pass does one unit of the background work; stop when it finds none
                    }
                }

                /**
                 * Recovery, then the background work it gives back, until the invariants hold: a job whose attempt
                 * failed is due again only after its back-off (at most a few milliseconds in the contenders), so each
                 * pass waits a millisecond, and the passes outlast any back-off the contenders configure.
                 */
                @Override
                public void recover(MongoDatabase database) {
                    Instance process = contender.start(database);
                    for (int pass = 0; pass < MAX_RECOVERY_PASSES; pass++) {
                        process.recover(Duration.ZERO);
                        for (int b = 0; b < MAX_BACKGROUND_PASSES && process.background(); b++) {
                            // what recovery gave back, run by the background work
                        }
                        if (contender.invariants(database).isEmpty()) {
                            return;
                        }
                        LockSupport.parkNanos(Duration.ofMillis(1).toNanos());
                    }
                }

                @Override
                public List<String> invariants(MongoDatabase database) {
                    return contender.invariants(database);
                }

                @Override
                public String toString() {
                    return contender.name();
                }
            };
        }
    }

    /** The most background passes {@link Contender#asWorkload()} runs after one operation. */
    static final int MAX_BACKGROUND_PASSES = 100;
    /** The most recovery passes {@link Contender#asWorkload()} runs, a millisecond apart. */
    static final int MAX_RECOVERY_PASSES = 200;

    /** One process's instance of a contender. */
    public interface Instance {

        /** One operation as the caller makes it (a transfer, a rename; for the ledger an append, for the queue an enqueue). */
        void operation(Random random);

        /**
         * One pass of the work the pattern's README puts in the background (the ledger's committer, the queue's
         * workers); false when there was nothing to do. Nothing for the others.
         */
        default boolean background() {
            return false;
        }

        /** The pattern's recovery (staleness {@code staleAfter}); nothing for the naive loop. */
        void recover(Duration staleAfter);

        /** One read of the documents as they are stored; false when it breaks the workload's invariant. */
        boolean rawReadIsConsistent(Random random);

        /**
         * One read through the pattern's own consistent read ({@code readConsistent}, the ledger's {@code balances},
         * the versioned {@code read}); empty when the pattern has none, or when that read declined to answer (nothing
         * settled within its wait).
         */
        default Optional<Boolean> patternReadIsConsistent(Random random) {
            return Optional.empty();
        }
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
        return 1L + random.nextInt(500);
    }

    /** Sums every account in one query. */
    private static boolean bankSumIsTotal(MongoDatabase db) {
        long sum = 0;
        for (Document a : db.getCollection(BANK).find()) {
            sum += ((Number) a.get(Accounts.BALANCE)).longValue();
        }
        return sum == TOTAL;
    }

    /** An instance from its actions; {@code background} and {@code patternRead} may be null (none). */
    private record Actions(Consumer<Random> operation, BooleanSupplier backgroundPass, Consumer<Duration> recovery,
                           Predicate<Random> rawRead, Function<Random, Optional<Boolean>> patternRead)
            implements Instance {

        Actions(Consumer<Random> operation, Consumer<Duration> recovery, Predicate<Random> rawRead) {
            this(operation, null, recovery, rawRead, null);
        }

        @Override
        public void operation(Random random) {
            operation.accept(random);
        }

        @Override
        public boolean background() {
            return backgroundPass != null && backgroundPass.getAsBoolean();
        }

        @Override
        public void recover(Duration staleAfter) {
            recovery.accept(staleAfter);
        }

        @Override
        public boolean rawReadIsConsistent(Random random) {
            return rawRead.test(random);
        }

        @Override
        public Optional<Boolean> patternReadIsConsistent(Random random) {
            return patternRead == null ? Optional.empty() : patternRead.apply(random);
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
        public String anomalies() {
            return "a read between its two updates sees money missing, and a crash there makes the loss permanent, so"
                    + " every read after the first such crash counts as an anomaly.";
        }

        @Override
        public Optional<String> noConsistentRead() {
            return Optional.of("nothing records a transfer in flight, so no reader can tell one from a finished one");
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
            }, null, tpc::recover, random -> bankSumIsTotal(db), random -> {
                ConsistentRead view = tpc.readConsistent(BANK, ACCOUNT_IDS);
                if (!view.isResolved()) {
                    return Optional.empty();   // transactions kept being decided between its reads
                }
                long sum = view.documents().stream().mapToLong(d -> ((Number) d.get(Accounts.BALANCE)).longValue())
                        .sum();
                return Optional.of(sum == TOTAL);
            });
        }

        @Override
        public String anomalies() {
            return variant == TransferVariant.RESERVE_THEN_CREDIT
                    ? "a raw read between prepare and settle sees the source debited before the destination is"
                    + " credited (money in flight, by design); readConsistent counts each transaction in flight"
                    + " entirely or not at all, without waiting."
                    : "a raw read between prepare and settle may see a credit before its debit settles, or one a"
                    + " cancel later reverses (by design); readConsistent counts each transaction in flight entirely"
                    + " or not at all, without waiting.";
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

        /**
         * As its README recommends: the caller appends (one insert) and a committer runs in the background. The raw
         * reader sums the cached {@code balance} fields; the consistent reader reads every account with
         * {@code balances()}.
         */
        @Override
        public Instance start(MongoDatabase db) {
            Ledger ledger = LedgerLab.ledger(db);
            return new Actions(random -> {
                int[] p = pair(random);
                ledger.append(LedgerTransaction.transfer("a" + p[0], "a" + p[1], amount(random)));
            }, () -> ledger.recover(Duration.ZERO).examined() > 0, ledger::recover, random -> {   // the committer
                long sum = 0;
                for (Document a : db.getCollection(LedgerConfig.DEFAULT_ACCOUNTS_COLLECTION).find()) {
                    sum += ((Number) a.get("balance")).longValue();
                }
                return sum == TOTAL;
            }, random -> Optional.of(ledger.balances(ACCOUNT_IDS).values().stream().mapToLong(Long::longValue)
                    .sum() == TOTAL));
        }

        @Override
        public String anomalies() {
            return "the cached balance fields lag the log until the committer reaches each transaction, so a raw read"
                    + " of them can straddle a commit; balances() counts every appended transaction entirely or not"
                    + " at all.";
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
            }, () -> queue.processNext().isPresent(), queue::recover, random -> bankSumIsTotal(db), null);
        }

        @Override
        public int backgroundProcesses(int writers) {
            return writers;   // a worker pool as large as the callers, so that the queue keeps up
        }

        @Override
        public String anomalies() {
            return "a job's debit and credit land one after the other, so a raw read between them sees money in"
                    + " flight until the job is done.";
        }

        @Override
        public Optional<String> noConsistentRead() {
            return Optional.of(QUEUE_HAS_NO_CONSISTENT_READ);
        }

        @Override
        public List<String> invariants(MongoDatabase db) {
            List<String> problems = new ArrayList<>();
            Map<Object, Long> effects = new HashMap<>();
            for (Document job : db.getCollection("jobs").find()) {
                if (!"done".equals(job.getString("state"))) {
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
            }, null, store::recover, random -> newestItemsSum(db) == TOTAL,
                    random -> Optional.of(sum(store.read(ROOT)) == TOTAL));
        }

        /** What a naive reader of the item documents sees: each item's newest document, committed or not. */
        private static long newestItemsSum(MongoDatabase db) {
            Map<Object, Document> newest = new HashMap<>();
            for (Document d : db.getCollection(VersionedStoreConfig.DEFAULT_ITEMS_COLLECTION)
                    .find(eq("root", ROOT))) {
                newest.merge(d.get("item"), d, (a, b) -> ((Number) a.get("version")).longValue()
                        >= ((Number) b.get("version")).longValue() ? a : b);
            }
            long sum = 0;
            for (Document d : newest.values()) {
                if (d.get("value") instanceof Document item && item.get(Accounts.BALANCE) instanceof Number n) {
                    sum += n.longValue();
                }
            }
            return sum;
        }

        @Override
        public String anomalies() {
            return "a raw read of each item's newest document sees the staged documents of writers that have not"
                    + " committed, lost the race or crashed; read() sees exactly one committed version.";
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
            return new Actions(random -> queue.enqueue(JobRequest.of("rename", new Document("user",
                    "u" + random.nextInt(RENAMED_USERS)).append("name", "Name " + renames.incrementAndGet()))),
                    () -> queue.processNext().isPresent(), queue::recover, random -> copiesMatchMaster(db, random),
                    null);
        }

        @Override
        public int backgroundProcesses(int writers) {
            return writers;   // a worker pool as large as the callers, so that the queue keeps up
        }

        @Override
        public String anomalies() {
            return "the job sets the master's name, then the comments', so a raw read while it runs sees old names"
                    + " on some comments.";
        }

        @Override
        public Optional<String> noConsistentRead() {
            return Optional.of(QUEUE_HAS_NO_CONSISTENT_READ);
        }

        @Override
        public List<String> invariants(MongoDatabase db) {
            List<String> problems = new ArrayList<>();
            for (Document job : db.getCollection("jobs").find()) {
                if (!"done".equals(job.getString("state"))) {
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
