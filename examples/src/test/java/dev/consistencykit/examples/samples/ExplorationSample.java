package dev.consistencykit.examples.samples;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.bson.Document;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.InterleavingExplorer;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.ShardTargeting;
import dev.consistencykit.testkit.Sharding;
import dev.consistencykit.testkit.Workload;
import dev.consistencykit.twophase.SettledRead;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;

/**
 * The README's exploration samples, proving the two-phase transfer: the pattern described once as a
 * {@link Workload} ({@link Transfers}), handed to the crash explorer and the interleaving explorer.
 * {@code seedAccounts}, {@code newStrategy}, {@code checkMoney} and {@code problemsInWhatAReaderSees} stand for your
 * own code.
 */
public final class ExplorationSample {

    private ExplorationSample() {
    }

    static void seedAccounts(MongoDatabase db) {
        db.getCollection("accounts").insertMany(List.of(new Document("_id", "alice").append("balance", 100L),
                new Document("_id", "bob").append("balance", 100L)));
    }

    static TwoPhaseCommit newStrategy(MongoDatabase db) {
        return TwoPhaseCommit.builder(db).build();
    }

    static List<String> checkMoney(MongoDatabase db) {
        List<String> problems = new ArrayList<>();
        long total = 0;
        for (Document account : db.getCollection("accounts").find()) {
            long balance = account.getLong("balance");
            total += balance;
            if (balance < 0) {
                problems.add(account.get("_id") + " is overdrawn: " + balance);
            }
        }
        if (total != 200L) {
            problems.add("money created or destroyed: total " + total);
        }
        return problems;
    }

    static List<String> problemsInWhatAReaderSees(MongoDatabase db) {
        SettledRead view = newStrategy(db).readSettled("accounts", List.of("alice", "bob"), Duration.ofSeconds(1));
        long total = view.documents().stream().mapToLong(d -> d.getLong("balance")).sum();
        return !view.isSettled() || total == 200L ? List.of() : List.of("a settled read saw a total of " + total);
    }

    // README:start workload
    /** Transfers between alice and bob, described once for every runner of the testkit. */
    public static final class Transfers implements Workload {
        @Override
        public void seed(MongoDatabase db) {
            seedAccounts(db);
        }

        @Override
        public void operate(MongoDatabase db, Random random) {                 // db may inject a fault
            boolean aliceToBob = random.nextBoolean();                         // the explorers seed it with 0
            newStrategy(db).transfer(Transfer.of(OperationId.of("t-" + random.nextLong()),
                    aliceToBob ? "alice" : "bob", aliceToBob ? "bob" : "alice", 1 + random.nextInt(30)));
        }

        @Override
        public void recover(MongoDatabase db) {                                // a fresh process
            newStrategy(db).recover(Duration.ZERO);
        }

        @Override
        public List<String> invariants(MongoDatabase db) {                     // read back from the server
            return checkMoney(db);
        }
    }
    // README:end

    /** Runs the crash-point sample with {@code client}. */
    public static CrashPointExplorer.ExplorationReport crashPoints(MongoClient client) {
        // README:start crash-points
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client)
                .workload(new Transfers())       // recovery also run by two processes at once
                .build().explore();              // every write site × every fault mode
        // README:end
        return report;
    }

    /** Runs the interleaving sample on {@code target}. */
    public static InterleavingExplorer.Report interleavings(MongoTarget target) {
        // README:start interleavings
        InterleavingExplorer.Report report = InterleavingExplorer.builder(target)
                .workload(new Transfers())                                         // paused at each call, in turn
                .actor("recoverer", db -> { newStrategy(db).recover(Duration.ZERO); return List.of(); })
                .actor("reader", db -> problemsInWhatAReaderSees(db))              // a reader reports what it saw
                .build().explore();                                                // calls x {before, after} x actors
        // README:end
        return report;
    }

    /** Runs the sharding sample: {@code orders} of {@code db} sharded, or the test skipped where it cannot be. */
    public static void shard(MongoClient client, MongoDatabase db) {
        // README:start sharding
        Sharding sharding = Sharding.of(client);
        assumeTrue(sharding.unavailable().isEmpty(), sharding.unavailable().orElse(""));
        sharding.shard(db, "orders", new Document("_id", "hashed"));
        // README:end
    }

    /** Runs the targeting sample: a transfer's calls and the shards each reached, on {@code target}. */
    public static List<ShardTargeting.Call> targeting(MongoTarget target, MongoDatabase db) {
        seedAccounts(db);
        TwoPhaseCommit strategy = newStrategy(db);
        Transfer transfer = Transfer.of(OperationId.of("t-targeted"), "alice", "bob", 10);
        // README:start shard-targeting
        try (ShardTargeting targeting = ShardTargeting.attach(target, db.getName())) {
            strategy.transfer(transfer);
            return targeting.calls(db);        // [update accounts: 1 shard(s), insert transactions: 1 shard(s), …]
        }
        // README:end
    }
}
