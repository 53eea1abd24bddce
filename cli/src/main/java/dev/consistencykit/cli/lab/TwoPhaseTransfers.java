package dev.consistencykit.cli.lab;

import static dev.consistencykit.cli.lab.ContenderWorkloads.ACCOUNTS;
import static dev.consistencykit.cli.lab.ContenderWorkloads.ACCOUNT_IDS;
import static dev.consistencykit.cli.lab.ContenderWorkloads.BANK;
import static dev.consistencykit.cli.lab.ContenderWorkloads.OPENING;
import static dev.consistencykit.cli.lab.ContenderWorkloads.TOTAL;
import static dev.consistencykit.cli.lab.ContenderWorkloads.amount;
import static dev.consistencykit.cli.lab.ContenderWorkloads.bankSumIsTotal;
import static dev.consistencykit.cli.lab.ContenderWorkloads.pair;

import java.util.List;
import java.util.Optional;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.Accounts;
import dev.consistencykit.twophase.ConsistentRead;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TransferVariant;
import dev.consistencykit.twophase.TwoPhaseCommit;

final class TwoPhaseTransfers extends BankContender {

    private final TransferVariant variant;

    TwoPhaseTransfers(TransferVariant variant) {
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
        return new ContenderActions(random -> {
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
