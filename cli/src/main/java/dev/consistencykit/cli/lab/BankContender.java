package dev.consistencykit.cli.lab;

import static dev.consistencykit.cli.lab.ContenderWorkloads.ACCOUNTS;
import static dev.consistencykit.cli.lab.ContenderWorkloads.BANK;
import static dev.consistencykit.cli.lab.ContenderWorkloads.OPENING;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.testkit.Accounts;

/** What the bank-transfer contenders share: the workload's name and its accounts. */
abstract class BankContender implements Contender {

    @Override
    public String workload() {
        return "bank-transfer";
    }

    @Override
    public void setup(MongoDatabase db) {
        Accounts.seed(db, BANK, Accounts.named(ACCOUNTS, OPENING));
    }
}
