package dev.consistencykit.logreconciliation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.DatabaseSnapshot;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** Bad transactions get a typed error before any write, and leave the database as it was. */
@ExtendWith(MongoTestExtension.class)
class BadInputTest {

    @Test
    void shouldRejectMalformedTransactionsBeforeAnyWrite(MongoDatabase db) {
        Books.seed(db, Books.accounts(2, 100));
        Ledger ledger = Books.ledger(db).build();
        ledger.ensureIndexes();
        DatabaseSnapshot before = DatabaseSnapshot.of(db);
        OperationId id = OperationId.of("t");

        assertThatThrownBy(() -> new LedgerTransaction(id, List.of(Change.debit("a0", 10), Change.credit("a1", 9)),
                true)).isInstanceOf(InvalidInputException.class).hasMessageContaining("does not sum to zero: -1");
        assertThatThrownBy(() -> Change.debit("a0", 0)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("value must be > 0");
        assertThatThrownBy(() -> Change.credit("a0", -5)).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> LedgerTransaction.of(Change.credit("a0", Long.MAX_VALUE), Change.credit("a1", 1)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("overflow");
        assertThatThrownBy(() -> Change.of("a0", "refund", 5)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("unknown change type 'refund'");
        assertThatThrownBy(() -> new LedgerTransaction(id, List.of(), false)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("at least one change");
        assertThatThrownBy(() -> LedgerTransaction.of(Change.credit("a0", 5), Change.debit("a0", 5)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("appears twice");
        assertThatThrownBy(() -> Change.credit("$where", 5)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("must not start with '$'");
        assertThatThrownBy(() -> Change.credit(" ", 5)).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> ledger.apply(LedgerTransaction.of(Change.credit("a0", 5))
                .withId(new OperationId(new Document("$gt", ""))))).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> ledger.balance("$a0")).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> ledger.cursor("a0", -1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Books.ledger(db).staleAfter(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);

        assertThat(DatabaseSnapshot.of(db)).isEqualTo(before);
    }

    @Test
    void shouldRejectAReusedIdWithOtherChangesWithoutWriting(MongoDatabase db) {
        Books.seed(db, Books.accounts(3, 100));
        Ledger ledger = Books.ledger(db).build();
        ledger.ensureIndexes();
        OperationId id = OperationId.of("t1");
        ledger.append(LedgerTransaction.transfer("a0", "a1", 10).withId(id));
        DatabaseSnapshot before = DatabaseSnapshot.of(db);

        assertThat(ledger.append(LedgerTransaction.transfer("a0", "a1", 10).withId(id))).isEqualTo(id);
        assertThatThrownBy(() -> ledger.append(LedgerTransaction.transfer("a0", "a1", 11).withId(id)))
                .isInstanceOf(IdempotencyConflictException.class).hasMessageContaining("t1");
        assertThatThrownBy(() -> Books.ledger(db).build().append(LedgerTransaction.transfer("a0", "a2", 10)
                .withId(id))).isInstanceOf(IdempotencyConflictException.class);

        assertThat(DatabaseSnapshot.of(db)).isEqualTo(before);
    }
}
