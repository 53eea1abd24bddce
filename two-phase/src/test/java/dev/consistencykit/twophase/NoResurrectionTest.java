package dev.consistencykit.twophase;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * A record write lands, its reply is lost and its caller pauses; meanwhile the transaction is finished by another
 * process and a pruner whose clock is days ahead runs; then the caller's retry is sent. The retry must find the
 * record, never insert it again: the transaction runs once, whatever has been pruned, however late the caller wakes.
 */
@ExtendWith(MongoTestExtension.class)
class NoResurrectionTest {

    private static final Map<String, Long> ACCOUNTS = Bank.accounts(2, 1_000);
    private static final Transfer T1 = Transfer.of(OperationId.of("t1"), "a0", "a1", 100);

    private static TwoPhaseCommit tpc(MongoDatabase db) {
        return TwoPhaseCommit.builder(db).retryPolicy(TestPolicies.FAST_RETRY).build();
    }

    /** A pruner whose clock is two days ahead: every terminal transaction is past its retention. */
    private static int prune(MongoDatabase db) {
        return TwoPhaseCommit.builder(db).retryPolicy(TestPolicies.FAST_RETRY).retention(Duration.ofDays(1))
                .serverClock(ServerClock.unsynchronized(Clock.offset(Clock.systemUTC(), Duration.ofDays(2))))
                .build().prune();
    }

    private static Document record(MongoDatabase db) {
        return db.getCollection(Bank.TRANSACTIONS).find(Filters.eq("_id", "t1")).first();
    }

    @Test
    void shouldNotRecordASubmittedTransactionAgainAfterAWorkerFinishedItAndAPrunerRan(MongoDatabase db)
            throws Exception {
        Bank.seed(db, ACCOUNTS);
        FaultInjector lost = FaultInjector.atWrite("updateOne", Bank.TRANSACTIONS, 1, FaultMode.PAUSE_AFTER);
        CompletableFuture<OperationId> submit = CompletableFuture.supplyAsync(() -> tpc(lost.wrap(db))
                .submitTransfer(T1));
        assertThat(lost.awaitPaused(Duration.ofSeconds(10))).isTrue();

        assertThat(tpc(db).processNext()).isPresent();
        int pruned = prune(db);
        lost.release();
        submit.get(30, TimeUnit.SECONDS);
        while (tpc(db).processNext().isPresent()) {
            // a resurrected record would run again here
        }

        assertThat(Bank.balance(db, "a0")).isEqualTo(900);
        assertThat(Bank.balance(db, "a1")).isEqualTo(1_100);
        assertThat(record(db).getString("state")).isEqualTo("done");
        assertThat(pruned).as("the record its recorder has not released is kept").isZero();
    }

    @Test
    void shouldNotApplyATransactionAgainThatRecoveryCanceledAndAPrunerRemoved(MongoDatabase db) throws Exception {
        Bank.seed(db, ACCOUNTS);
        FaultInjector lost = FaultInjector.atWrite("updateOne", Bank.TRANSACTIONS, 1, FaultMode.PAUSE_AFTER);
        CompletableFuture<OperationResult> apply = CompletableFuture.supplyAsync(() -> tpc(lost.wrap(db))
                .transfer(T1));
        assertThat(lost.awaitPaused(Duration.ofSeconds(10))).isTrue();

        tpc(db).recover(Duration.ZERO);   // stale in pending: rolled back, canceled
        prune(db);
        lost.release();
        OperationResult result = apply.get(30, TimeUnit.SECONDS);

        assertThat(record(db).getString("state")).isEqualTo("canceled");
        assertThat(result.isCommitted()).as("%s", result).isFalse();
        assertThat(Bank.balance(db, "a0")).isEqualTo(1_000);
        assertThat(Bank.balance(db, "a1")).isEqualTo(1_000);
    }

    /**
     * A writer that made one transfer and then idles (it never recovers, prunes or closes) keeps its record from a
     * pruner in another process; past the retention the pruner keeps only what a late retry reads (a few dozen bytes),
     * lists it with its writer and age, and removes it once the writer closes.
     */
    @Test
    void shouldKeepOnlyTheEvidenceOfARecordWhoseWriterIdlesPastItsRetentionAndRemoveItOnceTheWriterCloses(
            MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit idle = tpc(db);
        idle.ensureIndexes();
        idle.transfer(T1);
        int full = record(db).toBsonDocument().size();

        assertThat(prune(db)).as("held: not removed").isZero();
        Document kept = record(db);
        assertThat(kept).containsEntry("state", "done").containsKey(RecordReleases.FIELD)
                .containsKey(RecordReleases.COMPACTED).doesNotContainKeys("spec", "participants", "history");
        assertThat(kept.toBsonDocument().size()).as("bytes kept against %s", full).isLessThan(200);
        assertThat(tpc(db).kept(Duration.ZERO, 10)).singleElement().satisfies(k -> {
            assertThat(k.id()).isEqualTo("t1");
            assertThat(k.writer()).startsWith("two-phase/");
            assertThat(k.compacted()).isTrue();
        });

        idle.close();
        assertThat(prune(db)).as("released by close: removed").isEqualTo(1);
        assertThat(record(db)).isNull();
        assertThat(tpc(db).kept(Duration.ZERO, 10)).isEmpty();
    }

    /** The late retry of the test above, after the pruner compacted the record: it finds the evidence, runs nothing. */
    @Test
    void shouldNotRecordATransactionAgainWhoseRecordWasCompactedWhileItsRetryWaited(MongoDatabase db)
            throws Exception {
        Bank.seed(db, ACCOUNTS);
        FaultInjector lost = FaultInjector.atWrite("updateOne", Bank.TRANSACTIONS, 1, FaultMode.PAUSE_AFTER);
        CompletableFuture<OperationResult> apply = CompletableFuture.supplyAsync(() -> tpc(lost.wrap(db))
                .transfer(T1));
        assertThat(lost.awaitPaused(Duration.ofSeconds(10))).isTrue();

        tpc(db).recover(Duration.ZERO);
        prune(db);
        assertThat(record(db)).containsKey(RecordReleases.COMPACTED);
        lost.release();
        OperationResult result = apply.get(30, TimeUnit.SECONDS);
        while (tpc(db).processNext().isPresent()) {
            // a resurrected record would run again here
        }

        assertThat(result.isCommitted()).as("%s", result).isFalse();
        assertThat(Bank.balance(db, "a0")).isEqualTo(1_000);
        assertThat(Bank.balance(db, "a1")).isEqualTo(1_000);
        assertThat(record(db).getString("state")).isEqualTo("canceled");
    }

    @Test
    void shouldLetThePrunerRemoveARecordOnceItsRecorderReleasedIt(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        TwoPhaseCommit payments = tpc(db);
        payments.transfer(T1);
        assertThat(record(db)).containsKey(RecordReleases.FIELD);

        payments.recover(Duration.ofMinutes(1));   // releases what this instance recorded

        assertThat(record(db)).doesNotContainKey(RecordReleases.FIELD);
        assertThat(prune(db)).isEqualTo(1);
    }
}
