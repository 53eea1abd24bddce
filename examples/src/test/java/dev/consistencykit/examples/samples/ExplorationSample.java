package dev.consistencykit.examples.samples;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.bson.Document;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.InterleavingExplorer;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.twophase.SettledRead;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;

/**
 * The README's two exploration samples, proving the two-phase transfer. {@code seedAccounts}, {@code newStrategy},
 * {@code transfer}, {@code checkMoney} and {@code problemsInWhatAReaderSees} stand for your own code.
 */
public final class ExplorationSample {

    private static final Transfer transfer = Transfer.of(OperationId.of("t-1"), "alice", "bob", 30);

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

    /** Runs the crash-point sample with {@code client}. */
    public static CrashPointExplorer.ExplorationReport crashPoints(MongoClient client) {
        // README:start crash-points
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client)
                .setup(db -> seedAccounts(db))
                .operation(db -> newStrategy(db).transfer(transfer))        // db injects the fault
                .recovery(db -> newStrategy(db).recover(Duration.ZERO))    // a fresh process; also run by two at once
                .invariants(db -> checkMoney(db))                          // read back from the server
                .build().explore();                                        // every write site × every fault mode
        // README:end
        return report;
    }

    /** Runs the interleaving sample on {@code target}. */
    public static InterleavingExplorer.Report interleavings(MongoTarget target) {
        // README:start interleavings
        InterleavingExplorer.Report report = InterleavingExplorer.builder(target)
                .setup(db -> seedAccounts(db))
                .operation(db -> newStrategy(db).transfer(transfer))                // paused at each call, in turn
                .actor("recoverer", db -> { newStrategy(db).recover(Duration.ZERO); return List.of(); })
                .actor("reader", db -> problemsInWhatAReaderSees(db))              // a reader reports what it saw
                .finish(db -> newStrategy(db).recover(Duration.ZERO))
                .invariants(db -> checkMoney(db))
                .build().explore();                                                // calls x {before, after} x actors
        // README:end
        return report;
    }
}
