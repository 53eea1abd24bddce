package dev.consistencykit.logreconciliation;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * An append lands, its reply is lost and its caller pauses; meanwhile the committer commits the transaction and an
 * archiver whose clock is a day ahead runs; then the caller's retry is sent. It must find the transaction kept in the
 * log, never append it again: the money moves once, however late the caller wakes.
 */
@ExtendWith(MongoTestExtension.class)
class NoResurrectionTest {

    private static final Map<String, Long> OPENING = Books.accounts(2, 1_000);

    @Test
    void shouldNotAppendATransactionAgainThatWasCommittedAndArchivedWhileItsAppendWaitedForAReply(
            MongoDatabase db) throws Exception {
        Ledger committer = Books.ready(db, OPENING);
        FaultInjector lost = FaultInjector.atWrite("updateOne", LedgerConfig.DEFAULT_LEDGER_COLLECTION, 1,
                FaultMode.PAUSE_AFTER);
        CompletableFuture<OperationId> append = CompletableFuture.supplyAsync(() -> Books.ledger(lost.wrap(db))
                .build().append(LedgerTransaction.transfer("a0", "a1", 100).withId(OperationId.of("t"))));
        assertThat(lost.awaitPaused(Duration.ofSeconds(10))).isTrue();

        committer.recover(Duration.ZERO);
        int archived = Books.archiver(db).archive(Duration.ZERO);
        lost.release();
        append.get(30, TimeUnit.SECONDS);
        committer.recover(Duration.ZERO);

        assertThat(committer.balance("a0")).isEqualTo(900);
        assertThat(committer.balance("a1")).isEqualTo(1_100);
        assertThat(Books.invariants(db, OPENING, true, null)).isEmpty();
        assertThat(archived).as("the transaction its appender has not released is kept").isZero();
    }

    @Test
    void shouldLetTheArchiverMoveATransactionOnceItsAppenderReleasedIt(MongoDatabase db) {
        Ledger ledger = Books.ready(db, OPENING);
        ledger.apply(LedgerTransaction.transfer("a0", "a1", 5).withId(OperationId.of("t")));
        assertThat(db.getCollection(LedgerConfig.DEFAULT_LEDGER_COLLECTION).find().first())
                .containsKey(RecordReleases.FIELD);

        ledger.recover(Duration.ZERO);   // releases what this instance appended

        assertThat(Books.archiver(db).archive(Duration.ZERO)).isEqualTo(1);
        assertThat(Books.invariants(db, OPENING, true, null)).isEmpty();
    }
}
