package dev.consistencykit.twophase;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** The bank's invariants must be able to fail: each corruption below is reported. */
@ExtendWith(MongoTestExtension.class)
class InvariantsSelfTest {

    private static final Map<String, Long> ACCOUNTS = Bank.accounts(2, 100);

    private static MongoDatabase afterOneTransfer(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit.on(db).transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 30));
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
        return db;
    }

    @Test
    void shouldReportMoneyCreatedOrAppliedTwice(MongoDatabase db) {
        afterOneTransfer(db).getCollection(Bank.ACCOUNTS).updateOne(eq("_id", "a1"), Updates.inc("balance", 30L));

        assertThat(Bank.invariants(db, ACCOUNTS, true)).anyMatch(p -> p.contains("a1 holds 160"))
                .anyMatch(p -> p.contains("total 230"));
    }

    @Test
    void shouldReportNegativeBalanceAndLeftoverMarker(MongoDatabase db) {
        afterOneTransfer(db).getCollection(Bank.ACCOUNTS).updateOne(eq("_id", "a0"),
                Updates.combine(Updates.set("balance", -1L), Updates.push("pendingTransactions", "t1")));

        List<String> problems = Bank.invariants(db, ACCOUNTS, true);

        assertThat(problems).anyMatch(p -> p.contains("negative")).anyMatch(p -> p.contains("still carries"));
    }

    @Test
    void shouldReportIllegalHistoryAndUnfinishedTransaction(MongoDatabase db) {
        afterOneTransfer(db).getCollection(Bank.TRANSACTIONS).updateOne(eq("_id", "t1"),
                Updates.set("history", List.of("pending", "canceling", "done")));
        db.getCollection(Bank.TRANSACTIONS).insertOne(new org.bson.Document("_id", "t2").append("state", "applied")
                .append("history", List.of("pending", "applied")).append("participants", List.of()));

        assertThat(Bank.invariants(db, ACCOUNTS, true)).anyMatch(p -> p.contains("illegal transition"))
                .anyMatch(p -> p.contains("t2 not terminal"));
    }
}
