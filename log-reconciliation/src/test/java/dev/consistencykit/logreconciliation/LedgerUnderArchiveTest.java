package dev.consistencykit.logreconciliation;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.testkit.AfterCommand;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * The ledger while an archiver moves committed transactions out of the log: a caller held at its decision, a
 * reconcile folding the log, an id used again after its first transaction was archived.
 */
@ExtendWith(MongoTestExtension.class)
class LedgerUnderArchiveTest {

    private static final Map<String, Long> OPENING = Books.accounts(3, 1_000);

    private static Ledger ready(MongoDatabase db) {
        return Books.ready(db, OPENING);
    }

    @Test
    void shouldReportTheOutcomeWhenAnotherProcessCommitsAndArchivesWhileTheCallerIsHeldAtItsDecision(
            MongoDatabase db) throws Exception {
        Ledger other = ready(db);
        FaultInjector held = FaultInjector.atWrite("updateOne", LedgerConfig.DEFAULT_LEDGER_COLLECTION, 2,
                FaultMode.PAUSE);
        Ledger caller = Books.ledger(held.wrap(db)).build();
        CompletableFuture<OperationResult> applying = CompletableFuture.supplyAsync(() -> caller.apply(
                LedgerTransaction.transfer("a0", "a1", 5).withId(OperationId.of("t"))));
        assertThat(held.awaitPaused(Duration.ofSeconds(10))).isTrue();

        other.recover(Duration.ZERO);
        // the caller's append was acknowledged before it was held: its instance's maintenance, running in another
        // thread meanwhile, released it (RecordReleases), so the archiver may move it
        db.getCollection(LedgerConfig.DEFAULT_LEDGER_COLLECTION).updateMany(new Document(),
                com.mongodb.client.model.Updates.unset(dev.consistencykit.core.spi.RecordReleases.FIELD));
        assertThat(Books.archiver(db).archive(Duration.ZERO)).isEqualTo(1);
        held.release();
        OperationResult result = applying.get(30, TimeUnit.SECONDS);

        assertThat(result.isCommitted()).isTrue();
        assertThat(result.id()).isEqualTo(OperationId.of("t"));
        assertThat(other.balance("a0")).isEqualTo(995);
        assertThat(Books.invariants(db, OPENING, true, null)).isEmpty();
    }

    @Test
    void shouldKeepBothTransactionsInTheArchiveWhenAnIdIsUsedAgainAfterItsFirstWasArchived(MongoDatabase db) {
        Ledger ledger = ready(db);
        ledger.apply(LedgerTransaction.transfer("a0", "a1", 5).withId(OperationId.of("t")));
        ledger.recover(Duration.ZERO);   // its maintenance releases what it appended
        assertThat(Books.archiver(db).archive(Duration.ZERO)).isEqualTo(1);
        ledger.apply(LedgerTransaction.transfer("a0", "a1", 7).withId(OperationId.of("t")));   // a new transaction
        ledger.recover(Duration.ZERO);
        assertThat(Books.archiver(db).archive(Duration.ZERO)).isEqualTo(1);

        MongoCollection<Document> archive = db.getCollection(LedgerConfig.DEFAULT_ARCHIVE_COLLECTION);
        assertThat(archive.countDocuments(eq("_id.tx", "t"))).as("the first is not overwritten").isEqualTo(2);
        long archivedA0 = 0;
        for (Document tx : archive.find()) {
            for (Document c : tx.getList("changes", Document.class)) {
                archivedA0 += "a0".equals(c.getString("account")) ? c.getLong("value") : 0;
            }
        }
        assertThat(1_000 + archivedA0).as("the log still backs the balance").isEqualTo(ledger.balance("a0"))
                .isEqualTo(988);
        assertThat(Books.invariants(db, OPENING, true, null)).isEmpty();
    }

    @Test
    void shouldNotRepairTheCacheFromAFoldThatAnArchiverCutShort(MongoTarget target, MongoDatabase db) {
        Ledger ledger = ready(db);
        ledger.apply(LedgerTransaction.transfer("a0", "a1", 1).withId(OperationId.of("t1")));
        ledger.apply(LedgerTransaction.transfer("a0", "a1", 2).withId(OperationId.of("t2")));
        ledger.apply(LedgerTransaction.transfer("a0", "a1", 4).withId(OperationId.of("t3")));
        // t1 and t2 stamped a day back: an archiver whose clock stands an hour back moves them, not t3
        MongoCollection<Document> log = db.getCollection(LedgerConfig.DEFAULT_LEDGER_COLLECTION);
        java.time.Instant dayAgo = java.time.Instant.now().minus(Duration.ofDays(1));
        log.updateMany(in("_id", List.of("t1", "t2")), Updates.set("ts", java.util.Date.from(dayAgo)));
        Ledger archiver = Books.ledger(db).serverClock(ServerClock.unsynchronized(Clock.fixed(
                java.time.Instant.now().minus(Duration.ofHours(1)), ZoneOffset.UTC))).build();

        ReconcileReport report;
        try (AfterCommand archive = AfterCommand.once(target, db.getName(),
                () -> archiver.archive(Duration.ZERO))) {
            report = ledger.reconcile("a0", true);   // reads the cache, then the archiver runs, then the fold
            assertThat(archive.ran()).isTrue();
        }

        assertThat(report.repaired()).as("a fold that lost entries repairs nothing").isEmpty();
        assertThat(ledger.balance("a0")).isEqualTo(993);
        assertThat(db.getCollection(LedgerConfig.DEFAULT_ACCOUNTS_COLLECTION).find(eq("_id", "a0")).first()
                .getLong("balance")).isEqualTo(993);
        assertThat(ledger.reconcile("a0", false).problems()).isEmpty();
        assertThat(Books.invariants(db, OPENING, true, null)).isEmpty();
    }
}
