package dev.consistencykit.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerConfig;
import dev.consistencykit.logreconciliation.SeqAllocation;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncFlagConfig;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.twophase.StalePendingPolicy;
import dev.consistencykit.twophase.TransferVariant;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.twophase.TwoPhaseConfig;
import dev.consistencykit.versioning.Retention;
import dev.consistencykit.versioning.VersionedStore;
import dev.consistencykit.versioning.VersionedStoreConfig;

/**
 * Every pattern's configuration is built through its builder only, and a configuration goes back into a builder whole:
 * {@code builder(db).from(config)} gives an instance whose configuration equals the original, with every setting changed from its default (so a setting {@code from} forgets shows). Settings are
 * checked at the setter. Building sends nothing to the server.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConfigurationsTest {

    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-01-02T03:04:05Z"), ZoneOffset.UTC);
    private static final RetryPolicy RETRY = RetryPolicy.DEFAULT.withMaxAttempts(7);

    private MongoDatabase db;

    @BeforeAll
    void open() {
        db = MongoTarget.fromEnvironment().client().getDatabase(MongoTarget.freshDatabaseName("configs"));
    }

    @AfterAll
    void drop() {
        MongoTarget.drop(db);
    }

    @Test
    void shouldHandEachInstanceItsOwnCopyOfTheSettings() {
        JobQueue.Builder builder = JobQueue.builder(db).lease(Duration.ofSeconds(3));
        JobQueueConfig first = builder.build().config();
        builder.lease(Duration.ofSeconds(4)).operationTimeout(Duration.ofSeconds(5));

        assertThat(first.lease()).isEqualTo(Duration.ofSeconds(3));
        assertThat(first.operationTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(builder.build().config().operationTimeout()).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void shouldRoundTripEveryTwoPhaseSetting() {
        TwoPhaseConfig config = TwoPhaseCommit.builder(db).name("n").transactionsCollection("t")
                .accountsCollection("a").balanceField("money.amount").transferVariant(TransferVariant.APPLY_AT_PREPARE)
                .markerField("m").reservationField("r").lease(Duration.ofSeconds(3))
                .staleAfter(Duration.ofSeconds(4)).stalePendingPolicy(StalePendingPolicy.ROLL_FORWARD)
                .maxPendingPerDocument(9).retention(Duration.ofHours(5))
                .operationTimeout(Duration.ofSeconds(11)).retryPolicy(RETRY).clock(CLOCK).build()
                .config();
        TwoPhaseConfig defaults = TwoPhaseCommit.builder(db).build().config();
        assertThat(config).isNotEqualTo(defaults);
        assertThat(TwoPhaseCommit.builder(db).from(config).build().config()).isEqualTo(config).hasSameHashCodeAs(config)
                .hasToString(config.toString());
        assertThat(TwoPhaseCommit.builder(db).from(config).lease(Duration.ofSeconds(2)).build().config().lease())
                .isEqualTo(Duration.ofSeconds(2));
        assertThat(TwoPhaseConfig.defaults()).isEqualTo(TwoPhaseCommit.builder(db).from(defaults)
                .clock(Clock.systemUTC()).build().config());
    }

    @Test
    void shouldRoundTripEveryJobQueueSetting() {
        JobQueueConfig config = JobQueue.builder(db).name("n").collection("j").maxAttempts(9)
                .lease(Duration.ofSeconds(3)).retryBackoff(Duration.ofSeconds(2), Duration.ofMinutes(3))
                .retention(Duration.ofHours(5)).staleAfter(Duration.ofSeconds(4)).maxIdle(Duration.ofMillis(50))
                .operationTimeout(Duration.ofSeconds(11)).retryPolicy(RETRY).clock(CLOCK)
                .build().config();
        assertThat(config).isNotEqualTo(JobQueue.builder(db).build().config());
        assertThat(JobQueue.builder(db).from(config).build().config()).isEqualTo(config).hasSameHashCodeAs(config);
    }

    @Test
    void shouldRoundTripEveryLedgerSetting() {
        LedgerConfig config = Ledger.builder(db).name("n").collections("l", "a", "x")
                .seqAllocation(SeqAllocation.COUNTER).overdraftFloor(-5).staleAfter(Duration.ofSeconds(4))
                .operationTimeout(Duration.ofSeconds(11)).retryPolicy(RETRY).clock(CLOCK).build().config();
        assertThat(config).isNotEqualTo(Ledger.builder(db).build().config());
        assertThat(Ledger.builder(db).from(config).build().config()).isEqualTo(config).hasSameHashCodeAs(config);
        // from() also carries an absent floor over a present one
        LedgerConfig noFloor = Ledger.builder(db).build().config();
        assertThat(Ledger.builder(db).overdraftFloor(3).from(noFloor).build().config()).isEqualTo(noFloor);
    }

    @Test
    void shouldRoundTripEveryVersionedStoreSetting() {
        VersionedStoreConfig config = VersionedStore.builder(db).name("n").collections("r", "i", "h")
                .staleAfter(Duration.ofSeconds(4)).settleThreshold(3).retention(Retention.keepLast(2))
                .conflictAttempts(4).inlineTreeBytes(1024)
                .operationTimeout(Duration.ofSeconds(11)).retryPolicy(RETRY).clock(CLOCK).build().config();
        assertThat(config).isNotEqualTo(VersionedStore.builder(db).build().config());
        assertThat(VersionedStore.builder(db).from(config).build().config()).isEqualTo(config)
                .hasSameHashCodeAs(config);
    }

    @Test
    void shouldRoundTripEverySyncFlagSetting() {
        SyncFlagConfig config = SyncFlag.builder(db).name("n").master("users", "name", "email")
                .target(SyncTarget.in("comments", "authorId").copy("name", "authorName"))
                .target(SyncTarget.in("orders", "userId").copy("email", "contact"))
                .staleAfter(Duration.ofSeconds(4)).rememberedUpdates(3).sweepBatch(2)
                .operationTimeout(Duration.ofSeconds(11)).retryPolicy(RETRY).clock(CLOCK)
                .build().config();
        assertThat(SyncFlag.builder(db).from(config).build().config()).isEqualTo(config).hasSameHashCodeAs(config);
        // from() replaces the master and the targets, it does not add to them
        SyncFlagConfig other = SyncFlag.builder(db).master("accounts", "owner")
                .target(SyncTarget.in("cards", "accountId").copy("owner", "holder")).build().config();
        assertThat(SyncFlag.builder(db).from(other).from(config).build().config()).isEqualTo(config);
    }

    @Test
    void shouldCheckEverySettingAtItsSetter() {
        assertThatThrownBy(() -> TwoPhaseCommit.builder(db).transactionsCollection("$t"))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("transactionsCollection");
        assertThatThrownBy(() -> TwoPhaseCommit.builder(db).markerField("a.b"))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("markerField");
        assertThatThrownBy(() -> TwoPhaseCommit.builder(db).balanceField("a.$b"))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("balanceField");
        assertThatThrownBy(() -> JobQueue.builder(db).collection("$jobs"))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("collection");
        assertThatThrownBy(() -> JobQueue.builder(db).lease(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease");
        assertThatThrownBy(() -> Ledger.builder(db).staleAfter(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("staleAfter");
        assertThatThrownBy(() -> VersionedStore.builder(db).settleThreshold(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("settleThreshold");
        assertThatThrownBy(() -> VersionedStore.builder(db).inlineTreeBytes(-1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("inlineTreeBytes");
        assertThatThrownBy(() -> VersionedStore.builder(db).inlineTreeBytes(
                VersionedStoreConfig.MAX_INLINE_TREE_BYTES + 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("inlineTreeBytes");
        assertThatThrownBy(() -> SyncFlag.builder(db).sweepBatch(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sweepBatch");
        assertThatThrownBy(() -> TwoPhaseCommit.builder(db).from(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void shouldSendNothingToTheServerWhenBuilding() {
        assertThat(db.listCollectionNames().into(new java.util.ArrayList<>())).isEmpty();
    }
}
