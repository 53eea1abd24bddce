package dev.consistencykit.twophase;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.testkit.DatabaseSnapshot;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;
import dev.consistencykit.testkit.RoundTripCounter;

@ExtendWith(MongoTestExtension.class)
class TransferTest {

    private static final Map<String, Long> ACCOUNTS = Bank.accounts(3, 1_000);

    private static TwoPhaseCommit tpc(MongoDatabase db, TransferVariant variant) {
        TwoPhaseCommit tpc = TwoPhaseCommit.builder(db).transferVariant(variant).retryPolicy(TestPolicies.FAST_RETRY)
                .build();
        tpc.ensureIndexes();
        return tpc;
    }

    @Test
    void shouldMoveMoneyOnceAndEndDoneWhenReserveThenCredit(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit tpc = tpc(db, TransferVariant.RESERVE_THEN_CREDIT);

        OperationResult result = tpc.transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 250));

        assertThat(result.isCommitted()).isTrue();
        assertThat(result.state()).isEqualTo("done");
        assertThat(Bank.balance(db, "a0")).isEqualTo(750);
        assertThat(Bank.balance(db, "a1")).isEqualTo(1_250);
        Document tx = db.getCollection(Bank.TRANSACTIONS).find(eq("_id", "t1")).first();
        assertThat(tx.getList("history", String.class)).containsExactly("pending", "applied", "done");
        assertThat(tx.getString("label")).isEqualTo("transfer");
        Document a0 = db.getCollection(Bank.ACCOUNTS).find(eq("_id", "a0")).first();
        assertThat(a0).as("not even an empty array").doesNotContainKeys("pendingTransactions", "reservedTransactions");
        assertThat(a0.containsKey("settledTransactions")).as("no tombstone is kept").isFalse();
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
    }

    @Test
    void shouldTreatATransferAndItsTransactionAsOneOperationThroughEitherDoor(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit tpc = tpc(db, TransferVariant.RESERVE_THEN_CREDIT);
        Transfer t = Transfer.of(OperationId.of("t1"), "a0", "a1", 250);
        tpc.transfer(t);

        OperationResult again = tpc.apply(tpc.transferTransaction(t));
        tpc.transfer(Transfer.of(OperationId.of("t2"), "a0", "a1", 5));
        Transfer t3 = Transfer.of(OperationId.of("t3"), "a0", "a1", 5);
        tpc.apply(tpc.transferTransaction(t3));
        tpc.transfer(t3);

        assertThat(again.isCommitted()).isTrue();
        assertThat(Bank.balance(db, "a0")).as("each applied once").isEqualTo(740);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> tpc.apply(tpc.transferTransaction(
                Transfer.of(OperationId.of("t1"), "a0", "a1", 251))))
                .isInstanceOf(dev.consistencykit.core.IdempotencyConflictException.class);
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
    }

    @Test
    void shouldMoveMoneyOnceWhenApplyAtPrepare(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);

        OperationResult result = tpc(db, TransferVariant.APPLY_AT_PREPARE)
                .transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 250));

        assertThat(result.isCommitted()).isTrue();
        assertThat(Bank.balance(db, "a0")).isEqualTo(750);
        assertThat(Bank.balance(db, "a1")).isEqualTo(1_250);
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
    }

    @Test
    void shouldTakeAtMostSevenRoundTripsWhenUncontended(MongoTarget target, MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit tpc = tpc(db, TransferVariant.RESERVE_THEN_CREDIT);
        tpc.transfer(Transfer.of(OperationId.of("warm-up"), "a0", "a1", 1));

        try (RoundTripCounter counter = RoundTripCounter.attach(target, db.getName())) {
            for (int i = 0; i < 20; i++) {
                tpc.transfer(Transfer.of(OperationId.of("t" + i), "a" + (i % 3), "a" + ((i + 1) % 3), 5));
            }
            assertThat(counter.snapshot().commandsPer(20)).isLessThanOrEqualTo(7.0);
        }
    }

    @Test
    void shouldCancelWithNoNetEffectWhenFundsAreInsufficient(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit tpc = tpc(db, TransferVariant.RESERVE_THEN_CREDIT);

        assertThatThrownBy(() -> tpc.transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 5_000)))
                .isInstanceOf(InsufficientFundsException.class)
                .hasMessageContaining("insufficient funds in accounts/a0")
                .hasMessageContaining("balance >= 5000 (was 1000)")
                .satisfies(e -> assertThat(((TransactionCanceledException) e).participant()).isEqualTo("accounts/a0"));

        Document tx = db.getCollection(Bank.TRANSACTIONS).find(eq("_id", "t1")).first();
        assertThat(tx.getString("state")).isEqualTo("canceled");
        assertThat(tx.get("reason", Document.class).getString("code")).isEqualTo("INSUFFICIENT_FUNDS");
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
        assertThat(Bank.balance(db, "a0")).isEqualTo(1_000);
        assertThat(Bank.balance(db, "a1")).isEqualTo(1_000);
    }

    @Test
    void shouldThrowSameTypedErrorWhenCanceledTransferIsAppliedAgain(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit tpc = tpc(db, TransferVariant.RESERVE_THEN_CREDIT);
        Transfer t = Transfer.of(OperationId.of("t1"), "a0", "a1", 5_000);
        assertThatThrownBy(() -> tpc.transfer(t)).isInstanceOf(InsufficientFundsException.class);
        DatabaseSnapshot before = DatabaseSnapshot.of(db);

        assertThatThrownBy(() -> tpc.transfer(t)).isInstanceOf(InsufficientFundsException.class);

        assertThat(DatabaseSnapshot.of(db)).isEqualTo(before);
    }

    @Test
    void shouldCancelWhenDestinationIsMissing(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit tpc = tpc(db, TransferVariant.APPLY_AT_PREPARE);

        assertThatThrownBy(() -> tpc.transfer(Transfer.of(OperationId.of("t1"), "a0", "nobody", 10)))
                .isInstanceOf(ParticipantMissingException.class).hasMessageContaining("accounts/nobody");

        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
        assertThat(Bank.balance(db, "a0")).isEqualTo(1_000);
    }

    @Test
    void shouldCancelWhenAccountIsClosed(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        db.getCollection(Bank.ACCOUNTS).updateOne(eq("_id", "a1"), Updates.set("closed", true));
        TwoPhaseCommit tpc = tpc(db, TransferVariant.RESERVE_THEN_CREDIT);

        assertThatThrownBy(() -> tpc.transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 10)))
                .isInstanceOf(PreconditionFailedException.class).hasMessageContaining("closed != true");

        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
    }

    @Test
    void shouldNotCancelWhenBalanceCoversExactly(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);

        OperationResult result = tpc(db, TransferVariant.RESERVE_THEN_CREDIT)
                .transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 1_000));

        assertThat(result.isCommitted()).isTrue();
        assertThat(Bank.balance(db, "a0")).isZero();
    }

    @Test
    void shouldRejectBadInputBeforeAnyWrite(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit tpc = tpc(db, TransferVariant.RESERVE_THEN_CREDIT);
        DatabaseSnapshot before = DatabaseSnapshot.of(db);

        assertThatThrownBy(() -> tpc.transfer(Transfer.of(OperationId.of("t"), "a0", "a1", 0)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("amount must be > 0, was 0");
        assertThatThrownBy(() -> tpc.transfer(Transfer.of(OperationId.of("t"), "a0", "a1", -5)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("amount");
        assertThatThrownBy(() -> Transfer.of(OperationId.of("t"), "a0", "a1",
                BigInteger.valueOf(Long.MAX_VALUE).add(BigInteger.ONE)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("must fit a 64-bit long");
        assertThatThrownBy(() -> tpc.transfer(Transfer.of(OperationId.of("t"), "a0", "a0", 5)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("to must differ from from");
        assertThatThrownBy(() -> tpc.transfer(Transfer.of(OperationId.of("t"), null, "a1", 5)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("from must not be null");
        assertThatThrownBy(() -> tpc.transfer(Transfer.of(OperationId.of("t"), " ", "a1", 5)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("from must not be blank");
        assertThatThrownBy(() -> tpc.transfer(Transfer.of(OperationId.of("t"), new Document("$gt", ""), "a1", 5)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("'$gt' in from must not start with '$'");
        assertThatThrownBy(() -> Transfer.of(new OperationId(new Document("$ne", 1)), "a0", "a1", 5))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> tpc.apply(TwoPhaseTransaction.of(OperationId.of("t"),
                Participant.on("accounts", "a0").prepare(new Document("$inc", new Document("balance", -1))
                        .append("balance", 5)))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("mixes operators and plain fields");

        assertThat(DatabaseSnapshot.of(db)).isEqualTo(before);
    }

    @Test
    void shouldRejectReusedIdWithDifferentAmountAndReturnOutcomeForSameOne(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit tpc = tpc(db, TransferVariant.RESERVE_THEN_CREDIT);
        OperationResult first = tpc.transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 10));
        DatabaseSnapshot before = DatabaseSnapshot.of(db);

        assertThatThrownBy(() -> tpc.transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 11)))
                .isInstanceOf(IdempotencyConflictException.class).hasMessageContaining("t1");
        assertThatThrownBy(() -> tpc.transfer(Transfer.of(OperationId.of("t1"), "a0", "a2", 10)))
                .isInstanceOf(IdempotencyConflictException.class);
        OperationResult again = tpc.transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 10));

        assertThat(again).isEqualTo(first);
        assertThat(DatabaseSnapshot.of(db)).isEqualTo(before);
    }

    @Test
    void shouldMakeCanceledTransfersInvisibleToTotals(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit tpc = tpc(db, TransferVariant.APPLY_AT_PREPARE);
        for (int i = 0; i < 10; i++) {
            // amounts grow past any balance: the later ones cannot be covered
            try {
                tpc.transfer(Transfer.of(OperationId.of("t" + i), "a" + (i % 3), "a" + ((i + 1) % 3), 400 + i * 300));
            } catch (InsufficientFundsException expected) {
                // some of them cannot be covered
            }
        }

        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
        assertThat(List.of(tpc.status().count("done"), tpc.status().count("canceled")))
                .as("some transfers committed, some were canceled").allSatisfy(n -> assertThat(n).isPositive());
    }
}
