package dev.consistencykit.cli.lab;

import static com.mongodb.client.model.Filters.eq;
import static dev.consistencykit.cli.lab.ContenderWorkloads.BANK;
import static dev.consistencykit.cli.lab.ContenderWorkloads.TOTAL;
import static dev.consistencykit.cli.lab.ContenderWorkloads.amount;
import static dev.consistencykit.cli.lab.ContenderWorkloads.bankSumIsTotal;
import static dev.consistencykit.cli.lab.ContenderWorkloads.pair;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.testkit.Accounts;

/** The article's cautionary example: two unguarded updates, no record, no recovery. */
final class NaiveTransfers extends BankContender {

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
        return new ContenderActions(random -> {
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
