package dev.consistencykit.logreconciliation;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.DuplicateDataException;
import dev.consistencykit.core.MissingIndexException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.testkit.AfterCommand;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.IndexCoverage;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.QueryPlans;
import dev.consistencykit.testkit.junit5.MongoTestExtension;
import dev.consistencykit.testkit.RoundTripCounter;

@ExtendWith(MongoTestExtension.class)
class LedgerBehaviourTest {

    private static final Map<String, Long> OPENING = Books.accounts(4, 1_000);

    private static Ledger ready(MongoDatabase db) {
        return Books.ready(db, OPENING);
    }

    @Test
    void shouldAppendInOneRoundTripAndReadABalanceInThree(MongoTarget target, MongoDatabase db) {
        Ledger ledger = ready(db);
        for (int i = 0; i < 4; i++) {
            ledger.append(LedgerTransaction.transfer("a" + i, "a" + ((i + 1) % 4), 1));   // learns the heads
        }
        try (RoundTripCounter counter = RoundTripCounter.attach(target, db.getName())) {
            for (int i = 0; i < 20; i++) {
                ledger.append(LedgerTransaction.transfer("a" + (i % 4), "a" + ((i + 1) % 4), 5));
            }
            assertThat(counter.snapshot().commandsPer(20)).isEqualTo(1.0);
            counter.reset();
            assertThat(ledger.balance("a0")).isEqualTo(1_000);
            assertThat(counter.snapshot().commands()).isEqualTo(3);   // the cache, later changes, the cache again
            counter.reset();
            assertThat(ledger.balances(List.of("a0", "a1", "a2", "a3")).values()).containsOnly(1_000L);
            assertThat(counter.snapshot().commands()).isEqualTo(3);   // the same three for any number of accounts
        }
    }

    @Test
    void shouldShowAnAppendedTransferOnBothAccountsBeforeItCommits(MongoDatabase db) {
        Ledger ledger = ready(db);
        ledger.append(LedgerTransaction.transfer("a0", "a1", 300));

        assertThat(ledger.balance("a0")).isEqualTo(700);
        assertThat(ledger.balance("a1")).isEqualTo(1_300);
        assertThat(db.getCollection(LedgerConfig.DEFAULT_ACCOUNTS_COLLECTION).find(eq("_id", "a0")).first()
                .getLong("balance")).as("the cache lags until committed").isEqualTo(1_000);
        ledger.recover(Duration.ZERO);
        assertThat(Books.invariants(db, OPENING, true, null)).isEmpty();
    }

    @Test
    void shouldCancelAnOverdraftInLogOrderAndReportIt(MongoDatabase db) {
        Books.seed(db, OPENING);
        Ledger ledger = Books.ledger(db).overdraftFloor(0).build();
        ledger.ensureIndexes();
        ledger.append(LedgerTransaction.transfer("a0", "a1", 800).withId(OperationId.of("first")));
        ledger.append(LedgerTransaction.transfer("a0", "a2", 800).withId(OperationId.of("second")));

        OperationResult third = ledger.apply(LedgerTransaction.transfer("a0", "a3", 100).withId(OperationId.of("t3")));

        assertThat(third.isCommitted()).isTrue();
        Document second = db.getCollection(LedgerConfig.DEFAULT_LEDGER_COLLECTION).find(eq("_id", "second")).first();
        assertThat(second.getString("state")).isEqualTo("canceled");
        assertThat(second.getString("reason")).contains("a0 would go from 200 to -600, below the floor 0");
        assertThat(ledger.balance("a0")).isEqualTo(100);
        assertThat(ledger.apply(LedgerTransaction.transfer("a0", "a1", 101)).outcome())
                .isEqualTo(OperationResult.Outcome.ABORTED);
        assertThat(Books.invariants(db, OPENING, true, 0L)).isEmpty();
    }

    @Test
    void shouldCancelBeforeCommitAndReverseAfter(MongoDatabase db) {
        Ledger ledger = ready(db);
        OperationId pending = ledger.append(LedgerTransaction.transfer("a0", "a1", 50));
        ledger.cancel(pending);
        ledger.cancel(pending);
        OperationId done = OperationId.of("done");
        ledger.apply(LedgerTransaction.transfer("a0", "a2", 70).withId(done));

        assertThatThrownBy(() -> ledger.cancel(done)).isInstanceOf(TransactionCommittedException.class);
        assertThatThrownBy(() -> ledger.cancel(OperationId.of("nope"))).isInstanceOf(UnknownTransactionException.class);
        OperationId reversal = ledger.reverse(done);
        assertThat(ledger.reverse(done)).isEqualTo(reversal);
        ledger.recover(Duration.ZERO);

        assertThat(ledger.balance("a0")).isEqualTo(1_000);
        assertThat(ledger.balance("a1")).isEqualTo(1_000);
        assertThat(ledger.balance("a2")).isEqualTo(1_000);
        assertThat(Books.invariants(db, OPENING, true, null)).isEmpty();
    }

    @Test
    void shouldReportACorruptedCacheAndRepairItOnlyWhenAsked(MongoDatabase db) {
        Ledger ledger = ready(db);
        ledger.apply(LedgerTransaction.transfer("a0", "a1", 10));
        ledger.apply(LedgerTransaction.transfer("a0", "a1", 20));
        var accounts = db.getCollection(LedgerConfig.DEFAULT_ACCOUNTS_COLLECTION);
        accounts.updateOne(eq("_id", "a0"), Updates.set("balance", 5L));
        accounts.updateOne(eq("_id", "a1"), Updates.set("seqId", 9L));

        ReconcileReport wrong = ledger.reconcile("a0", false);
        ReconcileReport ahead = ledger.reconcile("a1", true);

        assertThat(wrong.problems()).containsExactly("the cache holds balance 5 at seqId 2; the log says 970");
        assertThat(accounts.find(eq("_id", "a0")).first().getLong("balance")).isEqualTo(5L);
        assertThat(ahead.problems()).containsExactly("the cache is ahead of the log: seqId 9, the log ends at 2");
        assertThat(ahead.repaired()).as("a cache ahead of the log is never rewritten").isEmpty();
        ReconcileReport fixed = ledger.reconcile("a0", true);
        assertThat(fixed.repaired()).containsExactly("cache balance set to 970");
        assertThat(ledger.reconcile("a0", false).consistent()).isTrue();
    }

    @Test
    void shouldReconcileEveryAccountUpToALimitProblemsFirstWithoutRepairing(MongoDatabase db) {
        Ledger ledger = ready(db);
        ledger.apply(LedgerTransaction.transfer("a0", "a1", 10));
        ledger.apply(LedgerTransaction.transfer("a2", "a1", 20));
        var accounts = db.getCollection(LedgerConfig.DEFAULT_ACCOUNTS_COLLECTION);
        accounts.updateOne(eq("_id", "a2"), Updates.set("balance", 5L));

        List<ReconcileReport> all = ledger.reconcileAccounts(100);
        List<ReconcileReport> one = ledger.reconcileAccounts(1);

        assertThat(all).extracting(ReconcileReport::account).containsExactlyInAnyOrder("a0", "a1", "a2");
        assertThat(all.get(0).account()).isEqualTo("a2");
        assertThat(all.get(0).problems()).hasSize(1);
        assertThat(all.subList(1, 3)).allMatch(ReconcileReport::consistent);
        assertThat(one).hasSize(1);
        assertThat(accounts.find(eq("_id", "a2")).first().getLong("balance")).as("nothing repaired").isEqualTo(5L);
        assertThatThrownBy(() -> ledger.reconcileAccounts(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldKeepBalancesExactAndReconcilableAfterArchiving(MongoDatabase db) throws Exception {
        Ledger ledger = ready(db);
        for (int i = 0; i < 6; i++) {
            ledger.apply(LedgerTransaction.transfer("a0", "a1", 10));
        }
        ledger.append(LedgerTransaction.transfer("a1", "a0", 5));
        LedgerCursor early = ledger.cursor("a0", 0);

        assertThat(ledger.archive(Duration.ZERO)).isEqualTo(6);

        assertThat(db.getCollection(LedgerConfig.DEFAULT_LEDGER_COLLECTION).countDocuments()).isEqualTo(1);
        assertThat(ledger.balance("a0")).isEqualTo(945);
        assertThat(ledger.reconcile("a0", false).consistent()).isTrue();
        ledger.recover(Duration.ZERO);
        assertThat(early.poll(100)).extracting(LedgerEntry::seqId).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L);
        assertThat(Books.invariants(db, OPENING, true, null)).isEmpty();
    }

    @Test
    void shouldFillAGapLeftByAReservationThatNeverAppended(MongoDatabase db) {
        Books.seed(db, OPENING);
        Ledger ledger = Books.ledger(db).seqAllocation(SeqAllocation.COUNTER).build();
        ledger.ensureIndexes();
        // a writer reserved a0's seqId 1 and died before appending
        db.getCollection(LedgerConfig.DEFAULT_ACCOUNTS_COLLECTION).updateOne(eq("_id", "a0"), Updates.inc("head", 1L));
        ledger.append(LedgerTransaction.transfer("a0", "a1", 10));

        assertThat(ledger.recover(Duration.ofHours(1)).repaired()).as("not stale yet").isZero();
        assertThat(ledger.recover(Duration.ZERO).repaired()).isEqualTo(1);
        assertThat(ledger.metrics().gapsFilled()).isEqualTo(1);
        assertThat(ledger.balance("a0")).isEqualTo(990);
        assertThat(Books.invariants(db, OPENING, true, null)).isEmpty();
    }

    /**
     * With numbers reserved from counters, the number before an applied transaction's may be another append's that
     * has not landed yet: apply waits for it (within its deadline), so that it answers committed, not in flight.
     */
    @Test
    void shouldWaitInApplyForAnEarlierNumberReservedByAnAppendInFlight(MongoDatabase db) throws Exception {
        Books.seed(db, OPENING);
        Ledger ledger = Books.ledger(db).seqAllocation(SeqAllocation.COUNTER).staleAfter(Duration.ofHours(1)).build();
        ledger.ensureIndexes();
        // another process reserved a0:1 and a1:1 and pauses before its insert
        FaultInjector pause = FaultInjector.atWrite("updateOne", "ledger", 1, FaultMode.PAUSE);
        Ledger other = Books.ledger(pause.wrap(db)).seqAllocation(SeqAllocation.COUNTER).build();
        CompletableFuture<OperationId> inFlight = CompletableFuture.supplyAsync(() -> other.append(
                LedgerTransaction.transfer("a0", "a1", 10).withId(OperationId.of("in-flight"))));
        assertThat(pause.awaitPaused(Duration.ofSeconds(10))).isTrue();
        CompletableFuture<OperationResult> applied = new CompletableFuture<>();
        Thread applying = new Thread(() -> applied.complete(ledger.apply(LedgerTransaction.transfer("a0", "a2", 5)
                .withId(OperationId.of("applied")))));
        applying.start();
        while (applying.getState() != Thread.State.TIMED_WAITING) {   // appended at a0:2, waiting for a0:1
            assertThat(applying.isAlive()).as("apply returned without waiting: " + applied.getNow(null)).isTrue();
            Thread.onSpinWait();
        }

        pause.release();
        inFlight.get(10, TimeUnit.SECONDS);

        assertThat(applied.get(10, TimeUnit.SECONDS).outcome()).isEqualTo(OperationResult.Outcome.COMMITTED);
        assertThat(ledger.metrics().gapsFilled()).isZero();
        assertThat(Books.invariants(db, OPENING, true, null)).isEmpty();
    }

    /** ... and once the applied transaction is stale, a number whose append never lands is filled, and it commits. */
    @Test
    void shouldFillInApplyANumberReservedByAnAppendThatNeverLandsOnceStale(MongoDatabase db) {
        Books.seed(db, OPENING);
        Ledger ledger = Books.ledger(db).seqAllocation(SeqAllocation.COUNTER).staleAfter(Duration.ofMillis(100))
                .build();
        ledger.ensureIndexes();
        db.getCollection(LedgerConfig.DEFAULT_ACCOUNTS_COLLECTION).updateOne(eq("_id", "a0"), Updates.inc("head", 1L));

        OperationResult result = ledger.apply(LedgerTransaction.transfer("a0", "a1", 10));

        assertThat(result.outcome()).isEqualTo(OperationResult.Outcome.COMMITTED);
        assertThat(ledger.metrics().gapsFilled()).isEqualTo(1);
        assertThat(Books.invariants(db, OPENING, true, null)).isEmpty();
    }

    @Test
    void shouldRefuseToAppendBeforeTheUniqueIndexExistsAndWriteNothing(MongoDatabase db) {
        Books.seed(db, OPENING);
        Ledger ledger = Books.ledger(db).build();

        assertThatThrownBy(() -> ledger.append(LedgerTransaction.transfer("a0", "a1", 1)))
                .isInstanceOf(MissingIndexException.class)
                .hasMessageContaining("account_seq").hasMessageContaining("ensureIndexes()");
        assertThatThrownBy(() -> ledger.apply(LedgerTransaction.transfer("a0", "a1", 1)))
                .isInstanceOf(MissingIndexException.class);
        assertThat(db.getCollection(LedgerConfig.DEFAULT_LEDGER_COLLECTION).countDocuments()).isZero();

        ledger.ensureIndexes();
        ledger.append(LedgerTransaction.transfer("a0", "a1", 1));
        assertThat(ledger.balance("a0")).isEqualTo(999);
    }

    @Test
    void shouldRefuseToAppendWhenTheIndexOnTheSequenceIsNotUnique(MongoDatabase db) {
        Books.seed(db, OPENING);
        MongoCollection<Document> log = db.getCollection(LedgerConfig.DEFAULT_LEDGER_COLLECTION);
        log.createIndex(Indexes.ascending("changes.k"), new IndexOptions().name("weak"));

        assertThatThrownBy(() -> Books.ledger(db).build().append(LedgerTransaction.transfer("a0", "a1", 1)))
                .isInstanceOf(MissingIndexException.class).hasMessageContaining("is not unique");
        assertThat(log.countDocuments()).isZero();
    }

    @Test
    void shouldListTheDocumentsThatBreakTheUniqueRuleWhenEnsureIndexesCannotBuildIt(MongoDatabase db) {
        Books.seed(db, OPENING);
        MongoCollection<Document> log = db.getCollection(LedgerConfig.DEFAULT_LEDGER_COLLECTION);
        for (String id : List.of("t1", "t2")) {   // written while the index was missing: seqId 1 of a0 twice
            log.insertOne(new Document("_id", id).append("proc", "uncommitted").append("state", "valid")
                    .append("changes", List.of(new Document("account", "a0").append("type", "DEBIT")
                            .append("value", -1L).append("seqId", 1L).append("k", "1:a0"))));
        }

        assertThatThrownBy(() -> Books.ledger(db).build().ensureIndexes())
                .isInstanceOf(DuplicateDataException.class)
                .hasMessageContaining("changes.k: \"1:a0\"")
                .hasMessageContaining("t1").hasMessageContaining("t2");
    }

    @Test
    void shouldCountEveryTransactionOnceWhenTheyCommitWhileTheStatusIsRead(MongoTarget target, MongoDatabase db) {
        Ledger ledger = ready(db);
        for (int i = 0; i < 4; i++) {
            ledger.append(LedgerTransaction.transfer("a" + i, "a" + ((i + 1) % 4), 1));
        }
        Ledger committer = Books.ledger(db).build();

        StrategyStatus status;
        try (AfterCommand commit = AfterCommand.once(target, db.getName(), () -> committer.recover(Duration.ZERO))) {
            status = ledger.status();
            assertThat(commit.ran()).isTrue();
        }

        assertThat(status.total()).as("a snapshot: %s", status.countsByState()).isEqualTo(4);
        assertThat(ledger.status().count("committed")).isEqualTo(4);
    }

    @Test
    void shouldNeverWrapABalancePastTheRangeOfALong(MongoDatabase db) {
        Ledger ledger = ready(db);
        ledger.apply(LedgerTransaction.of(Change.credit("big", Long.MAX_VALUE - 10)).withId(OperationId.of("fill")));
        ledger.append(LedgerTransaction.of(Change.credit("big", 100)).withId(OperationId.of("over")));

        assertThatThrownBy(() -> ledger.balance("big")).isInstanceOf(ConsistencyException.class)
                .hasMessageContaining("64-bit");
        OperationResult over = ledger.apply(LedgerTransaction.of(Change.credit("big", 100))
                .withId(OperationId.of("over")));

        assertThat(over.outcome()).isEqualTo(OperationResult.Outcome.ABORTED);
        assertThat(over.reason()).hasValueSatisfying(r -> assertThat(r).contains("overflow"));
        assertThat(ledger.balance("big")).isEqualTo(Long.MAX_VALUE - 10);
    }

    @Test
    void shouldReportStatusAndMetrics(MongoDatabase db) {
        Ledger ledger = ready(db);
        ledger.append(LedgerTransaction.transfer("a0", "a1", 1));
        ledger.append(LedgerTransaction.transfer("a1", "a2", 1));
        ledger.apply(LedgerTransaction.transfer("a2", "a3", 1));

        StrategyStatus status = ledger.status();
        assertThat(status.count("committed")).as("the apply commits its predecessors first").isEqualTo(3);
        ledger.append(LedgerTransaction.transfer("a3", "a0", 1));
        assertThat(ledger.status().inFlight()).isEqualTo(1);
        assertThat(ledger.status().oldestInFlightAge()).isPresent();
        assertThat(ledger.metrics().appended()).isEqualTo(4);
        assertThat(ledger.metrics().committed()).isEqualTo(3);
        assertThat(ledger.accountsWithGaps()).isEmpty();
    }

    @Test
    void shouldServeEveryQueryFromADeclaredIndex(MongoTarget target, MongoDatabase db) {
        Ledger ledger = ready(db);
        try (IndexCoverage coverage = IndexCoverage.attach(target, db.getName())) {
            ledger.append(LedgerTransaction.transfer("a0", "a1", 1));
            ledger.apply(LedgerTransaction.transfer("a1", "a2", 1));
            ledger.append(LedgerTransaction.transfer("a2", "a3", 1));
            ledger.balance("a0");
            ledger.recover(Duration.ZERO);
            ledger.recover();
            ledger.cursor("a0", 0).poll(10);
            ledger.reconcile("a1", false);
            ledger.status();
            ledger.archive(Duration.ofDays(1));

            assertThat(coverage.uncovered(db)).isEmpty();
        }
        assertThat(List.of(ledger.name())).containsExactly("log-reconciliation");
    }

    /**
     * What the server plans for each query, where it explains them: none reads the whole ledger. The index a query
     * needs may be declared and still go unread: the real engine plans an {@code $elemMatch} on {@code changes} alone
     * as a scan of every document, not of {@code account_seq} (docs/servers.md).
     */
    @Test
    void shouldReadNoQueryByTheWholeCollection(MongoTarget target, MongoDatabase db) {
        Ledger ledger = ready(db);
        for (int i = 0; i < 40; i++) {
            ledger.append(LedgerTransaction.transfer("a" + (i % 3), "a" + ((i + 1) % 3), 1));
        }
        Ledger other = Books.ledger(db).build();   // a second instance: no heads learnt, each read from the log
        List<QueryPlans.Plan> plans;
        try (QueryPlans recorder = QueryPlans.attach(target.commandListeners())) {
            other.append(LedgerTransaction.transfer("a3", "a0", 1));
            other.apply(LedgerTransaction.transfer("a1", "a2", 1));
            other.balance("a0");
            other.balances(List.of("a1", "a2"));
            other.recover(Duration.ZERO);
            other.cursor("a0", 0).poll(10);
            other.reconcile("a1", false);
            plans = recorder.explain(target.client());
        }
        assertThat(plans).filteredOn(QueryPlans.Plan::wholeCollection).isEmpty();
    }
}
