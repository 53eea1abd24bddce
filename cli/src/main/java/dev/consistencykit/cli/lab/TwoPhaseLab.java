package dev.consistencykit.cli.lab;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

import org.bson.Document;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.testkit.Accounts;
import dev.consistencykit.testkit.ChaosRunner;
import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.InterleavingExplorer;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.twophase.Participant;
import dev.consistencykit.twophase.SettledRead;
import dev.consistencykit.twophase.StalePendingPolicy;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TransferVariant;
import dev.consistencykit.twophase.TwoPhaseAudit;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.twophase.TwoPhaseConfig;
import dev.consistencykit.twophase.TwoPhaseTransaction;

/** Chaos and benchmark of two-phase commit on the bank-transfer workload. */
public final class TwoPhaseLab implements PatternLab {

    private static final String ACCOUNTS = TwoPhaseConfig.DEFAULT_ACCOUNTS_COLLECTION;

    @Override
    public String pattern() {
        return "two-phase";
    }

    private static TwoPhaseCommit instance(MongoDatabase db, TransferVariant variant, StalePendingPolicy policy) {
        return TwoPhaseCommit.builder(db).transferVariant(variant).stalePendingPolicy(policy).retryPolicy(FAST_RETRY)
                .build();
    }

    /**
     * Two-phase commit as every exploration of this lab runs it: {@code accounts} seeded; one operation a random
     * transfer under an id of its own; recovery rolls back or forward what was left; the bank's invariants.
     */
    private static LabWorkload workload(Map<String, Long> accounts, TransferVariant variant, StalePendingPolicy policy) {
        int n = accounts.size();
        return new LabWorkload(db -> Accounts.seed(db, ACCOUNTS, accounts), (db, random) -> {
            int from = random.nextInt(n);
            int to = (from + 1 + random.nextInt(n - 1)) % n;
            instance(db, variant, policy).transfer(Transfer.of(OperationId.of("t-" + Long.toHexString(
                    random.nextLong())), "a" + from, "a" + to, 1 + random.nextInt(400)));
        }, db -> instance(db, variant, policy).recover(Duration.ZERO),
                db -> invariants(db, accounts, variant == TransferVariant.RESERVE_THEN_CREDIT));
    }

    /** The bank's invariants for two-phase commit, read back from {@code db}. */
    public static List<String> invariants(MongoDatabase db, Map<String, Long> initial, boolean noNegative) {
        TwoPhaseAudit audit = TwoPhaseCommit.on(db).audit(Accounts.BALANCE);
        List<String> problems = new ArrayList<>(audit.problemsWhenQuiescent());
        problems.addAll(Accounts.checkMoney(Accounts.balances(db, ACCOUNTS), initial,
                audit.committedEffectsOn(ACCOUNTS), noNegative));
        return problems;
    }

    private static TwoPhaseTransaction threeWay(OperationId id) {
        return TwoPhaseTransaction.of(id,
                Participant.on(ACCOUNTS, "a0").when(Filters.gte("balance", 90L))
                        .prepare(Updates.inc("balance", -90L)).rollback(Updates.inc("balance", 90L)),
                Participant.on(ACCOUNTS, "a1").commit(Updates.inc("balance", 60L)),
                Participant.on(ACCOUNTS, "a2").prepare(Updates.inc("balance", 30L))
                        .rollback(Updates.inc("balance", -30L)));
    }

    @Override
    public ChaosReport chaos(MongoTarget target, int seeds, Consumer<String> progress) {
        MongoClient client = target.client();
        Map<String, Long> three = Accounts.named(3, 1_000);
        int writeSites = 0;
        int scenarios = 0;
        List<String> details = new ArrayList<>();
        record Exploration(String name, TransferVariant variant, StalePendingPolicy policy, boolean threeWay,
                           boolean recoveryFaults) {
        }
        List<Exploration> explorations = List.of(
                new Exploration("transfer, reserve then credit", TransferVariant.RESERVE_THEN_CREDIT,
                        StalePendingPolicy.ROLL_BACK, false, true),
                new Exploration("transfer, apply at prepare", TransferVariant.APPLY_AT_PREPARE,
                        StalePendingPolicy.ROLL_BACK, false, false),
                new Exploration("three-participant split", TransferVariant.RESERVE_THEN_CREDIT,
                        StalePendingPolicy.ROLL_FORWARD, true, false));
        for (Exploration e : explorations) {
            OperationId id = OperationId.of("tx-1");
            CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client)
                    .name("2pc")
                    .workload(workload(three, e.variant(), e.policy()).operation(db -> {
                        TwoPhaseCommit tpc = instance(db, e.variant(), e.policy());
                        if (e.threeWay()) {
                            tpc.apply(threeWay(id));
                        } else {
                            tpc.transfer(Transfer.of(id, "a0", "a1", 250));
                        }
                    }))
                    .recoveryFaults(e.recoveryFaults())
                    .build().explore();
            writeSites = Math.max(writeSites, report.writeSites());
            scenarios += report.scenarios();
            report.violations().forEach(v -> details.add(e.name() + ": " + v));
            progress.accept("explored " + e.name() + ": " + report.writeSites() + " write sites, "
                    + report.scenarios() + " scenarios, " + report.violations().size() + " violations");
        }
        Map<String, Long> ten = Accounts.named(10, 1_000);
        ChaosRunner runner = ChaosRunner.builder(client)
                .name("2pc")
                .workers(8).operationsPerWorker(3).faultRate(0.08).maxPause(Duration.ofMillis(15)).recoverers(2)
                .workload(workload(ten, TransferVariant.RESERVE_THEN_CREDIT, StalePendingPolicy.ROLL_BACK))
                .build();
        int interleavings = PatternLab.explore(List.of(interleaving(target, TransferVariant.RESERVE_THEN_CREDIT),
                interleaving(target, TransferVariant.APPLY_AT_PREPARE)), details, progress);
        ChaosRunner.Summary summary = PatternLab.runSeeds(runner, seeds, progress);
        summary.failures().forEach(r -> details.add("chaos " + r));
        int violations = (int) details.stream().count();
        return new ChaosReport(pattern(), writeSites, scenarios, interleavings, seeds, summary.operations(), summary.crashes(),
                summary.faults(), violations, details.subList(0, Math.min(details.size(), 20)));
    }

    /**
     * A transfer paused at each of its driver calls while a recoverer, a second owner, a pruner days ahead, a worker
     * or a settled reader runs.
     */
    private static InterleavingExplorer interleaving(MongoTarget target, TransferVariant variant) {
        Map<String, Long> three = Accounts.named(3, 1_000);
        Transfer transfer = Transfer.of(OperationId.of("t1"), "a0", "a1", 100);
        return InterleavingExplorer.builder(target)
                .name("transfer-" + variant)
                .workload(workload(three, variant, StalePendingPolicy.ROLL_BACK)
                        .operation(db -> instance(db, variant, StalePendingPolicy.ROLL_BACK).transfer(transfer))
                        .checkedBy(db -> {
                            List<String> problems = new ArrayList<>();
                            Map<Object, Long> b = Accounts.balances(db, ACCOUNTS);
                            boolean moved = b.get("a0") == 900 && b.get("a1") == 1_100;
                            if (!(moved || (b.get("a0") == 1_000 && b.get("a1") == 1_000)) || b.get("a2") != 1_000) {
                                problems.add("balances " + b + " are neither before nor after t1");
                            }
                            Document tx = db.getCollection(TwoPhaseConfig.DEFAULT_TRANSACTIONS_COLLECTION)
                                    .find(Filters.eq("_id", "t1")).first();
                            if (tx != null && !("done".equals(tx.getString("state")) && moved)
                                    && !("canceled".equals(tx.getString("state")) && !moved)) {
                                problems.add("t1 is " + tx.getString("state") + " with balances " + b);
                            }
                            for (Document a : db.getCollection(ACCOUNTS).find()) {
                                for (String f : List.of("pendingTransactions", "reservedTransactions")) {
                                    if (!a.getList(f, Object.class, List.of()).isEmpty()) {
                                        problems.add(a.get("_id") + " still carries " + f + " " + a.get(f));
                                    }
                                }
                            }
                            return problems;
                        }))
                .actor("recoverer", db -> {
                    instance(db, variant, StalePendingPolicy.ROLL_BACK).recover(Duration.ZERO);
                    return List.of();
                })
                .actor("second owner", db -> {
                    instance(db, variant, StalePendingPolicy.ROLL_BACK).transfer(transfer);
                    return List.of();
                })
                .actor("worker", db -> {
                    instance(db, variant, StalePendingPolicy.ROLL_BACK).processNext();
                    return List.of();
                })
                .actor("pruner", db -> {
                    TwoPhaseCommit.builder(db).retryPolicy(FAST_RETRY).retention(Duration.ofDays(1))
                            .serverClock(ServerClock.unsynchronized(Clock.offset(Clock.systemUTC(),
                                    Duration.ofDays(2)))).build().prune();
                    return List.of();
                })
                .actor("settled reader", db -> {
                    SettledRead read = instance(db, variant, StalePendingPolicy.ROLL_BACK).readSettled(ACCOUNTS,
                            List.of("a0", "a1", "a2"), Duration.ZERO);
                    long sum = read.documents().stream().mapToLong(d -> d.getLong(Accounts.BALANCE)).sum();
                    return read.isSettled() && sum != 3_000 ? List.of("a settled read summed " + sum) : List.of();
                })
                .build();
    }

    @Override
    public BenchReport bench(MongoTarget target, Bench.Settings settings, Consumer<String> progress) {
        MongoDatabase db = Bench.database(target, "bench2pc", settings,
                Map.of(TwoPhaseConfig.DEFAULT_TRANSACTIONS_COLLECTION, "_id", ACCOUNTS, "_id"));
        try {
            // uncontended: transfers spread over many accounts (bench --hot pays every transfer into one)
            int accounts = 10_000;
            Accounts.seed(db, ACCOUNTS, Accounts.named(accounts, 1_000_000_000_000L));
            TwoPhaseCommit tpc = TwoPhaseCommit.on(db);
            tpc.ensureIndexes();
            AtomicLong ids = new AtomicLong();
            Runnable transfer = () -> {
                int from = ThreadLocalRandom.current().nextInt(accounts);
                int to = (from + 1 + ThreadLocalRandom.current().nextInt(accounts - 1)) % accounts;
                tpc.transfer(Transfer.of(OperationId.of("b" + ids.incrementAndGet()), "a" + from, "a" + to, 1));
            };
            List<String> accountIds = new ArrayList<>(Accounts.named(accounts, 0).keySet());
            IntConsumer raw = Bench.rawUpdate(db.getCollection(ACCOUNTS), accountIds);
            Bench.Measured m = Bench.measure(target, db.getName(), settings, t -> transfer.run(), raw, progress,
                    "two-phase transfers");
            return new BenchReport(pattern(), settings.threads(), m.pattern().operations(), m.roundTripsPerOp(),
                    m.writesPerOp(), m.pattern().perSecond(), m.raw().perSecond(),
                    new Document("variant", tpc.config().transferVariant().name()).append("accounts", accounts)
                            .append("rawBaseline", Bench.RAW_BASELINE));
        } finally {
            Bench.release(db, settings);
        }
    }

    @Override
    public boolean hasHotBench() {
        return true;
    }

    @Override
    public BenchReport benchHot(MongoTarget target, int operations, Consumer<String> progress) {
        MongoDatabase db = target.client().getDatabase(MongoTarget.freshDatabaseName("hot2pc"));
        try {
            int customers = 1_000;
            Map<String, Long> accounts = new java.util.LinkedHashMap<>(Accounts.named(customers, 1_000_000_000L));
            accounts.put("merchant", 0L);
            Accounts.seed(db, ACCOUNTS, accounts);
            TwoPhaseCommit tpc = TwoPhaseCommit.on(db);
            tpc.ensureIndexes();
            Bench.Hot hot = Bench.hot(target, db, db.getCollection(ACCOUNTS), "merchant", operations,
                    i -> tpc.transfer(Transfer.of(OperationId.of("h" + i), "a" + (i % customers), "merchant", 1)),
                    progress);
            return new BenchReport(pattern(), 1, hot.operations(), hot.roundTripsPerOp(), hot.writesPerOp(),
                    hot.opsPerSec(), hot.rawOpsPerSec(), hot.json()
                            .append("operation", "transfer(a_i -> merchant, 1): every transfer pays into one account")
                            .append("rawBaseline", "updateOne $inc of the hot document, one thread"));
        } finally {
            db.drop();
        }
    }
}
