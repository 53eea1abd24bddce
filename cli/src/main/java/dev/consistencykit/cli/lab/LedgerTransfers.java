package dev.consistencykit.cli.lab;

import static dev.consistencykit.cli.lab.ContenderWorkloads.ACCOUNTS;
import static dev.consistencykit.cli.lab.ContenderWorkloads.ACCOUNT_IDS;
import static dev.consistencykit.cli.lab.ContenderWorkloads.OPENING;
import static dev.consistencykit.cli.lab.ContenderWorkloads.TOTAL;
import static dev.consistencykit.cli.lab.ContenderWorkloads.amount;
import static dev.consistencykit.cli.lab.ContenderWorkloads.pair;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerConfig;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.testkit.Accounts;

final class LedgerTransfers implements Contender {

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
        return new ContenderActions(random -> {
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
