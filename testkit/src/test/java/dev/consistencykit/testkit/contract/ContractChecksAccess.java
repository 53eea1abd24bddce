package dev.consistencykit.testkit.contract;

import java.time.Duration;

import com.mongodb.client.MongoDatabase;

/** Lets tests run a check with another budget than the one the CLI uses. */
public final class ContractChecksAccess {

    private ContractChecksAccess() {
    }

    public static String readAtomicity(MongoDatabase db, Duration duration) {
        return ServerContract.singleDocumentReadAtomicity(db, duration);
    }
}
