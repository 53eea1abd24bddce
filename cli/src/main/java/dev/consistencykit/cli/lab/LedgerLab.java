package dev.consistencykit.cli.lab;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

import org.bson.Document;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.IndexOptions;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.logreconciliation.Change;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerConfig;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.logreconciliation.ReconcileReport;
import dev.consistencykit.logreconciliation.SeqAllocation;
import dev.consistencykit.testkit.ChaosRunner;
import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.InterleavingExplorer;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.RoundTripCounter;

/** Chaos and benchmark of log reconciliation on a payments ledger. */
public final class LedgerLab implements PatternLab {

    private static final String ACCOUNTS = LedgerConfig.DEFAULT_ACCOUNTS_COLLECTION;

    @Override
    public String pattern() {
        return "log-reconciliation";
    }

    static Ledger ledger(MongoDatabase db) {
        return Ledger.builder(db).retryPolicy(FAST_RETRY).overdraftFloor(0).build();
    }

    /** {@code n} accounts opened with {@code balance} each, as checkpoints their logs start after. */
    static Map<String, Long> open(MongoDatabase db, int n, long balance) {
        Map<String, Long> opening = new LinkedHashMap<>();
        List<Document> docs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            opening.put("a" + i, balance);
            docs.add(new Document("_id", "a" + i).append("balance", balance).append("seqId", 0L)
                    .append("checkpoint", new Document("seqId", 0L).append("balance", balance)));
        }
        db.getCollection(ACCOUNTS).insertMany(docs);
        ledger(db).ensureIndexes();
        return opening;
    }

    /** Every transaction committed, every account reconciled against its log, no overdraft, money conserved. */
    public static List<String> invariants(MongoDatabase db, Map<String, Long> opening) {
        List<String> problems = new ArrayList<>();
        Ledger ledger = ledger(db);
        long uncommitted = ledger.status().inFlight();
        if (uncommitted > 0) {
            problems.add(uncommitted + " transactions uncommitted");
        }
        long total = 0;
        for (String account : opening.keySet()) {
            ReconcileReport r = ledger.reconcile(account, false);
            r.problems().forEach(p -> problems.add(account + ": " + p));
            long balance = ledger.balance(account);
            if (balance != r.cacheBalance() || balance < 0) {
                problems.add(account + ": balance " + balance + ", cache " + r.cacheBalance());
            }
            total += balance;
        }
        long opened = opening.values().stream().mapToLong(Long::longValue).sum();
        if (total != opened) {
            problems.add("money not conserved: " + total + " != " + opened);
        }
        if (!ledger.accountsWithGaps().isEmpty()) {
            problems.add("accounts with gaps: " + ledger.accountsWithGaps());
        }
        return problems;
    }

    @Override
    public ChaosReport chaos(MongoTarget target, int seeds, Consumer<String> progress) {
        MongoClient client = target.client();
        List<String> details = new ArrayList<>();
        int scenarios = 0;
        int writeSites = 0;
        Map<String, LedgerTransaction> cases = Map.of(
                "transfer", LedgerTransaction.transfer("a0", "a1", 250).withId(OperationId.of("t1")),
                "three-account split", new LedgerTransaction(OperationId.of("t1"), List.of(Change.debit("a0", 90),
                        Change.credit("a1", 60), Change.credit("a2", 30)), true));
        for (Map.Entry<String, LedgerTransaction> c : cases.entrySet()) {
            CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client)
                    .name("ledger")
                    .workload(workload(3, 1_000).alsoSeeding(db -> ledger(db).append(LedgerTransaction
                            .transfer("a2", "a0", 5).withId(OperationId.of("t0")))).operation(db -> ledger(db)
                            .apply(c.getValue())))
                    .recoveryFaults(c.getKey().equals("transfer"))
                    .build().explore();
            scenarios += report.scenarios();
            writeSites = Math.max(writeSites, report.writeSites());
            report.violations().forEach(v -> details.add(c.getKey() + ": " + v));
            progress.accept("explored a " + c.getKey() + " appended and committed: " + report.writeSites()
                    + " write sites, " + report.scenarios() + " scenarios, " + report.violations().size()
                    + " violations");
        }
        ChaosRunner runner = ChaosRunner.builder(client)
                .name("ledger")
                .workers(6).operationsPerWorker(4).faultRate(0.08).maxPause(Duration.ofMillis(15)).recoverers(2)
                .workload(workload(4, 500))
                .build();
        int interleavings = PatternLab.explore(List.of(
                interleaving(target, "transfer", LedgerTransaction.transfer("a0", "a1", 10)),
                interleaving(target, "split", LedgerTransaction.of(Change.debit("a0", 9), Change.credit("a1", 6),
                        Change.credit("a2", 3)).asTransfer())), details, progress);
        ChaosRunner.Summary summary = PatternLab.runSeeds(runner, seeds, progress);
        summary.failures().forEach(r -> details.add("chaos " + r));
        return new ChaosReport(pattern(), writeSites, scenarios, interleavings, seeds, summary.operations(),
                summary.crashes(),
                summary.faults(), details.size(), details.subList(0, Math.min(details.size(), 20)));
    }

    /**
     * Log reconciliation as every exploration of this lab runs it: {@code n} accounts of {@code balance} each; one
     * operation a random transfer under an id of its own, applied or only appended; the committer; the books'
     * invariants.
     */
    private static LabWorkload workload(int n, long balance) {
        Map<String, Long> opening = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            opening.put("a" + i, balance);
        }
        return new LabWorkload(db -> open(db, n, balance), (db, random) -> {
            int from = random.nextInt(n);
            int to = (from + 1 + random.nextInt(n - 1)) % n;
            LedgerTransaction tx = LedgerTransaction.transfer("a" + from, "a" + to, 1 + random.nextInt(300))
                    .withId(OperationId.of("t-" + Long.toHexString(random.nextLong())));
            if (random.nextBoolean()) {
                ledger(db).apply(tx);
            } else {
                ledger(db).append(tx);
            }
        }, db -> ledger(db).recover(Duration.ZERO), db -> invariants(db, opening));
    }

    /**
     * {@code tx} applied in the caller's thread, paused at each of its driver calls while a committer, an archiver, a
     * second owner, another appender or a reader summing every balance (exactly: nothing else moves) runs.
     */
    private static InterleavingExplorer interleaving(MongoTarget target, String name, LedgerTransaction tx) {
        LedgerTransaction once = tx.withId(OperationId.of("t1"));
        Map<String, Long> opening = new LinkedHashMap<>();
        for (int i = 0; i < 3; i++) {
            opening.put("a" + i, 500L);
        }
        return InterleavingExplorer.builder(target)
                .name(name)
                .workload(workload(3, 500)
                        .alsoSeeding(db -> ledger(db).apply(LedgerTransaction.transfer("a1", "a0", 5)))
                        .operation(db -> ledger(db).apply(once)))
                .actor("committer", db -> {
                    ledger(db).recover(Duration.ZERO);
                    return List.of();
                })
                .actor("archiver", db -> {
                    ledger(db).archive(Duration.ZERO);
                    return List.of();
                })
                .actor("second owner", db -> {
                    ledger(db).apply(once);
                    return List.of();
                })
                .actor("appender", db -> {
                    ledger(db).append(LedgerTransaction.transfer("a2", "a0", 2));
                    return List.of();
                })
                .actor("reader", db -> {
                    long sum = 0;
                    for (String account : opening.keySet()) {
                        sum += ledger(db).balance(account);
                    }
                    return sum == 1_500 ? List.of() : List.of("the balances sum to " + sum + " with 1500 in the books");
                })
                .build();
    }

    private static final int BENCH_ACCOUNTS = 1_000;

    @Override
    public List<String> variants() {
        return List.of("query", "counter");
    }

    @Override
    public BenchReport bench(MongoTarget target, Bench.Settings settings, Consumer<String> progress) {
        SeqAllocation allocation = settings.variant().equals("counter") ? SeqAllocation.COUNTER : SeqAllocation.QUERY;
        MongoDatabase db = Bench.database(target, "benchledger", settings,
                Map.of(ACCOUNTS, "_id", LedgerConfig.DEFAULT_ARCHIVE_COLLECTION, "_id"));
        try {
            open(db, BENCH_ACCOUNTS, 1_000_000_000L);
            Ledger ledger = Ledger.builder(db).seqAllocation(allocation).build();
            IntConsumer append = t -> {
                int from = ThreadLocalRandom.current().nextInt(BENCH_ACCOUNTS);
                int to = (from + 1 + ThreadLocalRandom.current().nextInt(BENCH_ACCOUNTS - 1)) % BENCH_ACCOUNTS;
                ledger.append(LedgerTransaction.transfer("a" + from, "a" + to, 1));
            };
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < BENCH_ACCOUNTS; i++) {
                ids.add("a" + i);
            }
            // The operation measured is an append whose accounts' heads this process knows. Every account's head is
            // learned first, by a transfer touching it, however many appends the timed warm-up makes on this
            // machine: otherwise a slow or busy one measures first appends (a read more each) instead.
            if (allocation == SeqAllocation.QUERY) {
                progress.accept("learning the sequence heads of " + BENCH_ACCOUNTS + " accounts");
                for (int i = 0; i + 1 < BENCH_ACCOUNTS; i += 2) {
                    ledger.append(LedgerTransaction.transfer("a" + i, "a" + (i + 1), 1));
                }
            }
            IntConsumer raw = Bench.rawUpdate(db.getCollection(ACCOUNTS), ids);
            Bench.Measured m = Bench.measure(target, db.getName(), settings, append, raw, progress,
                    "transfer appends");
            double balanceTrips;
            try (RoundTripCounter counter = RoundTripCounter.attach(target, db.getName())) {
                for (int i = 0; i < 20; i++) {
                    ledger.balance("a" + i);
                }
                balanceTrips = counter.snapshot().commandsPer(20);
            }
            progress.accept("measuring raw inserts of an appended transaction's copy under the ledger's indexes");
            double rawInserts = rawInserts(db, settings);
            long uncommitted = db.getCollection(LedgerConfig.DEFAULT_LEDGER_COLLECTION)
                    .countDocuments(Filters.eq("proc", "uncommitted"));
            progress.accept("committing " + uncommitted + " appended transactions");
            long start = System.nanoTime();
            RecoveryReport committed = ledger.recover(Duration.ZERO);
            double seconds = (System.nanoTime() - start) / 1e9;
            return new BenchReport(pattern(), settings.threads(), m.pattern().operations(), m.roundTripsPerOp(),
                    m.writesPerOp(), m.pattern().perSecond(), m.raw().perSecond(),
                    new Document("operation", allocation == SeqAllocation.COUNTER
                            ? "append(): one two-account transfer, each number reserved from its account's counter"
                            : "append(): one two-account transfer, sequence heads cached")
                            .append("seqAllocation", allocation.name())
                            .append("accounts", BENCH_ACCOUNTS)
                            .append("balanceRoundTrips", balanceTrips)
                            .append("committed", committed.repaired())
                            .append("commitsPerSec", Math.round(committed.repaired() / seconds * 10) / 10.0)
                            .append("rawBaseline", Bench.RAW_BASELINE)
                            .append("rawInsertsPerSec", Math.round(rawInserts * 10) / 10.0)
                            .append("rawInsertBaseline", RAW_INSERT_BASELINE));
        } finally {
            Bench.release(db, settings);
        }
    }

    /** What the second baseline is, for reports. */
    static final String RAW_INSERT_BASELINE = "insertOne of a copy of an appended transaction (its changes' keys made"
            + " fresh) into a collection with the ledger's indexes, same threads, half the duration";

    /**
     * Raw inserts per second of what an append writes, without the pattern: copies of one appended transaction, each
     * with a fresh {@code _id} and fresh change keys, into a collection carrying the ledger's indexes. An append is
     * one insert, so this is the most it could reach: how much of the gap to raw updates is the engine's cost of
     * writing a document under these indexes (two of them multikey, one unique).
     */
    private static double rawInserts(MongoDatabase db, Bench.Settings settings) {
        MongoCollection<Document> ledgerCollection = db.getCollection(LedgerConfig.DEFAULT_LEDGER_COLLECTION);
        MongoCollection<Document> copies = db.getCollection("rawInserts");
        for (Document index : ledgerCollection.listIndexes()) {
            if (!"_id_".equals(index.getString("name"))) {
                copies.createIndex(index.get("key", Document.class), new IndexOptions().name(index.getString("name"))
                        .unique(index.getBoolean("unique", false)).sparse(index.getBoolean("sparse", false)));
            }
        }
        Document template = ledgerCollection.find().first();
        if (template == null) {
            return 0;
        }
        java.util.concurrent.atomic.AtomicLong fresh = new java.util.concurrent.atomic.AtomicLong();
        Bench.Run run = Bench.timed(settings.threads(), settings.duration().dividedBy(2), t -> {
            Document copy = new Document(template);
            copy.put("_id", new org.bson.types.ObjectId());
            List<Document> changes = new ArrayList<>();
            for (Document change : template.getList("changes", Document.class)) {
                changes.add(new Document(change).append("k", "raw:" + fresh.incrementAndGet()));
            }
            copy.put("changes", changes);
            copies.insertOne(copy);
        });
        copies.drop();
        return run.perSecond();
    }
}
