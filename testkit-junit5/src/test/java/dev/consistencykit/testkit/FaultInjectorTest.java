package dev.consistencykit.testkit;

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

import com.mongodb.MongoException;
import com.mongodb.MongoSocketReadException;
import com.mongodb.MongoSocketWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.spi.MongoErrors;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

@ExtendWith(MongoTestExtension.class)
class FaultInjectorTest {

    private static MongoCollection<Document> counters(MongoDatabase db) {
        MongoCollection<Document> c = db.getCollection("counters");
        c.insertOne(new Document("_id", "c").append("n", 0));
        return c;
    }

    private static int n(MongoDatabase db) {
        return db.getCollection("counters").find(eq("_id", "c")).first().getInteger("n");
    }

    private static void increment(MongoDatabase db) {
        db.getCollection("counters").updateOne(eq("_id", "c"), Updates.inc("n", 1));
    }

    @Test
    void shouldNumberEveryWriteSiteWhenCounting(MongoDatabase db) {
        counters(db);
        FaultInjector injector = FaultInjector.counting();
        MongoDatabase faulty = injector.wrap(db);

        increment(faulty);
        faulty.getCollection("counters").find().first();
        faulty.getCollection("other").insertOne(new Document("_id", 1));
        faulty.getCollection("counters").findOneAndUpdate(eq("_id", "c"), Updates.inc("n", 1));
        faulty.getCollection("other").withDocumentClass(Document.class).deleteOne(eq("_id", 1));

        assertThat(injector.writes()).isEqualTo(4);
        assertThat(injector.sites()).extracting(WriteSite::method)
                .containsExactly("updateOne", "insertOne", "findOneAndUpdate", "deleteOne");
        assertThat(injector.sites()).extracting(WriteSite::collection)
                .containsExactly("counters", "other", "counters", "other");
        assertThat(n(db)).isEqualTo(2);
    }

    @Test
    void shouldDrawEachWritesFaultWithTheWeightOfItsModeAndTheSameScheduleForTheSameSeed(MongoDatabase db) {
        counters(db);
        Map<FaultMode, Double> rates = Map.of(FaultMode.TRANSIENT_BEFORE, 0.3,
                FaultMode.CONFLICT, 0.1);
        FaultInjector first = FaultInjector.weighted(7, rates, 0.0, Duration.ofMillis(1));
        FaultInjector second = FaultInjector.weighted(7, rates, 0.0, Duration.ofMillis(1));
        for (FaultInjector injector : List.of(first, second)) {
            MongoDatabase faulty = injector.wrap(db);
            for (int i = 0; i < 1_000; i++) {
                try {
                    increment(faulty);
                } catch (MongoException e) {
                    assertThat(MongoErrors.classify(e)).isNotEqualTo(MongoErrors.Kind.PERMANENT);
                }
            }
        }

        assertThat(first.faults()).isEqualTo(second.faults());
        assertThat(first.faults().stream().filter(f -> f.mode() == FaultMode.TRANSIENT_BEFORE).count())
                .isBetween(240L, 360L);
        assertThat(first.faults().stream().filter(f -> f.mode() == FaultMode.CONFLICT).count())
                .isBetween(60L, 140L);
        assertThat(n(db)).as("no faulted write was applied").isEqualTo(2 * (1_000 - first.faults().size()));
    }

    @Test
    void shouldKillSlowAndFailAProcessAtTheRatesItIsGiven(MongoDatabase db) {
        counters(db);
        long seed = 5;
        FaultInjector process = FaultInjector.weighted(seed, Map.of(FaultMode.CRASH_BEFORE, 0.01,
                FaultMode.CRASH_AFTER, 0.01, FaultMode.TRANSIENT_BEFORE, 0.02, FaultMode.TRANSIENT_AFTER, 0.02,
                FaultMode.PAUSE, 0.05), 0.05, Duration.ofMillis(20));
        MongoDatabase faulty = process.wrap(db);   // one process: once killed, the next gets an injector of its own

        assertThatThrownBy(() -> {
            for (int i = 0; i < 10_000; i++) {
                try {
                    increment(faulty);
                } catch (MongoException e) {
                    assertThat(MongoErrors.isTransient(e)).isTrue();
                }
            }
        }).isInstanceOf(InjectedCrash.class);
        assertThat(process.isDead()).isTrue();
    }

    @Test
    void shouldRefuseWeightsSummingOverOne() {
        assertThatThrownBy(() -> FaultInjector.weighted(1, Map.of(FaultMode.PAUSE, 0.6,
                FaultMode.CRASH_AFTER, 0.5), 0.0, Duration.ofMillis(1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sum to 1.1");
    }

    @Test
    void shouldPauseReadsWithTheirOwnRate(MongoDatabase db) throws InterruptedException {
        counters(db);
        FaultInjector injector = FaultInjector.weighted(3, Map.of(), 1.0, Duration.ofMillis(1));
        MongoDatabase faulty = injector.wrap(db);

        assertThat(faulty.getCollection("counters").find(eq("_id", "c")).first()).isNotNull();
        increment(faulty);

        assertThat(injector.awaitPaused(Duration.ZERO)).as("the read paused").isTrue();
        assertThat(injector.faults()).as("reads are never faulted, only slowed").isEmpty();
        assertThat(n(db)).isEqualTo(1);
    }

    @Test
    void shouldFaultOneProcessThroughTwoInjectorsOneAroundTheOther(MongoDatabase db) throws Exception {
        counters(db);
        FaultInjector outer = FaultInjector.at(1, FaultMode.PAUSE);
        FaultInjector inner = FaultInjector.at(1, FaultMode.CRASH_AFTER);
        MongoDatabase faulty = outer.wrap(inner.wrap(db));

        CompletableFuture<Void> write = CompletableFuture.runAsync(() -> increment(faulty));
        assertThat(outer.awaitPaused(Duration.ofSeconds(10))).isTrue();
        assertThat(n(db)).as("paused by the outer injector before the write").isZero();
        outer.release();

        assertThatThrownBy(() -> write.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(InjectedCrash.class);
        assertThat(n(db)).as("then applied, and the process killed, by the inner one").isEqualTo(1);
    }

    @Test
    void shouldNotSendWriteWhenCrashingBefore(MongoDatabase db) {
        counters(db);
        FaultInjector injector = FaultInjector.at(1, FaultMode.CRASH_BEFORE);

        assertThatThrownBy(() -> increment(injector.wrap(db))).isInstanceOf(InjectedCrash.class);

        assertThat(n(db)).as("write never reached the server").isZero();
        assertThat(injector.isDead()).isTrue();
    }

    @Test
    void shouldApplyWriteAndLoseAcknowledgementWhenCrashingAfter(MongoDatabase db) {
        counters(db);
        FaultInjector injector = FaultInjector.at(1, FaultMode.CRASH_AFTER);

        assertThatThrownBy(() -> increment(injector.wrap(db))).isInstanceOf(InjectedCrash.class)
                .hasMessageContaining("CRASH_AFTER").hasMessageContaining("updateOne on counters");

        assertThat(n(db)).as("write is on the server").isEqualTo(1);
    }

    @Test
    void shouldSendNothingMoreWhenProcessIsDead(MongoDatabase db) {
        counters(db);
        FaultInjector injector = FaultInjector.at(1, FaultMode.CRASH_AFTER);
        MongoDatabase faulty = injector.wrap(db);
        assertThatThrownBy(() -> increment(faulty)).isInstanceOf(InjectedCrash.class);

        assertThatThrownBy(() -> increment(faulty)).isInstanceOf(InjectedCrash.class)
                .hasMessageContaining("process is dead");
        assertThatThrownBy(() -> faulty.getCollection("counters").find().first()).isInstanceOf(InjectedCrash.class);

        assertThat(n(db)).isEqualTo(1);
        assertThat(injector.writes()).isEqualTo(1);
    }

    @Test
    void shouldNotApplyWriteAndRaiseRetryableErrorWhenTransientBefore(MongoDatabase db) {
        counters(db);
        FaultInjector injector = FaultInjector.at(1, FaultMode.TRANSIENT_BEFORE);
        MongoDatabase faulty = injector.wrap(db);

        assertThatThrownBy(() -> increment(faulty)).isInstanceOf(MongoSocketWriteException.class)
                .satisfies(e -> assertThat(MongoErrors.isTransient((MongoSocketWriteException) e)).isTrue());

        assertThat(n(db)).isZero();
        assertThat(injector.isDead()).as("a transient error is not a crash").isFalse();
        increment(faulty);
        assertThat(n(db)).as("the process goes on").isEqualTo(1);
    }

    @Test
    void shouldNotApplyWriteAndAnswerAsTheServerDoesToAConflictWhenConflict(MongoDatabase db) {
        counters(db);
        FaultInjector injector = FaultInjector.withSchedule(site -> java.util.Optional.of(FaultMode.CONFLICT));
        MongoDatabase faulty = injector.wrap(db);

        assertThatThrownBy(() -> increment(faulty)).isInstanceOf(com.mongodb.MongoWriteException.class)
                .satisfies(e -> assertThat(MongoErrors.isWriteConflict((com.mongodb.MongoException) e)).isTrue());
        assertThatThrownBy(() -> faulty.getCollection("counters").bulkWrite(java.util.List.of(
                new com.mongodb.client.model.UpdateOneModel<>(new org.bson.Document("_id", "c"),
                        com.mongodb.client.model.Updates.inc("n", 1)))))
                .isInstanceOf(com.mongodb.MongoBulkWriteException.class)
                .satisfies(e -> assertThat(MongoErrors.isTransient((com.mongodb.MongoException) e)).isTrue());
        assertThatThrownBy(() -> faulty.getCollection("counters").findOneAndUpdate(new org.bson.Document("_id", "c"),
                com.mongodb.client.model.Updates.inc("n", 1)))
                .isInstanceOf(com.mongodb.MongoCommandException.class)
                .satisfies(e -> assertThat(MongoErrors.isWriteConflict((com.mongodb.MongoException) e)).isTrue());

        assertThat(n(db)).as("a refused write applies nothing").isZero();
        assertThat(injector.isDead()).as("a conflict is not a crash").isFalse();
    }

    @Test
    void shouldApplyWriteAndRaiseRetryableErrorWhenTransientAfter(MongoDatabase db) {
        counters(db);
        FaultInjector injector = FaultInjector.at(1, FaultMode.TRANSIENT_AFTER);

        assertThatThrownBy(() -> increment(injector.wrap(db))).isInstanceOf(MongoSocketReadException.class)
                .satisfies(e -> assertThat(((MongoSocketReadException) e)
                        .hasErrorLabel(MongoErrors.RETRYABLE_WRITE_ERROR_LABEL)).isTrue());

        assertThat(n(db)).as("the write applied though the caller saw an error").isEqualTo(1);
    }

    @Test
    void shouldHoldWriteUntilReleasedWhenPaused(MongoDatabase db) throws Exception {
        counters(db);
        FaultInjector injector = FaultInjector.at(1, FaultMode.PAUSE);
        MongoDatabase faulty = injector.wrap(db);

        CompletableFuture<Void> zombie = CompletableFuture.runAsync(() -> increment(faulty));
        assertThat(injector.awaitPaused(Duration.ofSeconds(10))).isTrue();
        increment(db);
        assertThat(n(db)).as("only the other writer's write so far").isEqualTo(1);
        assertThat(zombie).isNotDone();

        injector.release();
        zombie.get(10, TimeUnit.SECONDS);
        assertThat(n(db)).as("the zombie's write arrives late").isEqualTo(2);
    }

    @Test
    void shouldHoldTheReplyOfAnAppliedWriteUntilReleasedWhenPausedAfter(MongoDatabase db) throws Exception {
        counters(db);
        FaultInjector injector = FaultInjector.at(1, FaultMode.PAUSE_AFTER);
        MongoDatabase faulty = injector.wrap(db);

        CompletableFuture<Void> caller = CompletableFuture.runAsync(() -> increment(faulty));
        assertThat(injector.awaitPaused(Duration.ofSeconds(10))).isTrue();
        assertThat(n(db)).as("the write landed before the pause").isEqualTo(1);
        assertThat(caller).isNotDone();

        injector.release();
        assertThatThrownBy(() -> caller.get(10, TimeUnit.SECONDS)).cause()
                .isInstanceOfSatisfying(MongoException.class, e -> assertThat(
                        e.hasErrorLabel(MongoErrors.RETRYABLE_WRITE_ERROR_LABEL)).isTrue());
        assertThat(n(db)).isEqualTo(1);
        assertThat(injector.isDead()).as("the caller lives on and may retry").isFalse();
    }

    @Test
    void shouldFaultOnlyTheChosenSite(MongoDatabase db) {
        counters(db);
        FaultInjector injector = FaultInjector.at(2, FaultMode.CRASH_BEFORE);
        MongoDatabase faulty = injector.wrap(db);

        increment(faulty);
        assertThatThrownBy(() -> increment(faulty)).isInstanceOf(InjectedCrash.class);

        assertThat(n(db)).isEqualTo(1);
        assertThat(injector.faults()).singleElement().satisfies(f -> {
            assertThat(f.site().number()).isEqualTo(2);
            assertThat(f.mode()).isEqualTo(FaultMode.CRASH_BEFORE);
        });
    }

    @Test
    void shouldProduceSameScheduleWhenSeedIsSame(MongoDatabase db) {
        counters(db);
        List<FaultInjector.InjectedFault> first = randomFaults(db, 42);
        List<FaultInjector.InjectedFault> second = randomFaults(db, 42);
        List<FaultInjector.InjectedFault> other = randomFaults(db, 43);

        assertThat(first).isNotEmpty().isEqualTo(second);
        assertThat(other).isNotEqualTo(first);
    }

    private static List<FaultInjector.InjectedFault> randomFaults(MongoDatabase db, long seed) {
        FaultInjector injector = FaultInjector.random(seed, 0.3,
                List.of(FaultMode.TRANSIENT_BEFORE, FaultMode.TRANSIENT_AFTER), Duration.ofMillis(1));
        MongoDatabase faulty = injector.wrap(db);
        for (int i = 0; i < 60; i++) {
            try {
                increment(faulty);
            } catch (MongoSocketReadException | MongoSocketWriteException expected) {
                // injected transient errors
            }
        }
        return injector.faults();
    }

    @Test
    void shouldFaultTheNamedWriteWhereverItFallsInTheSequence(MongoDatabase db) {
        for (int before = 0; before < 3; before++) {
            FaultInjector injector = FaultInjector.atWrite("updateOne", "accounts", 2, FaultMode.CRASH_BEFORE);
            MongoDatabase wrapped = injector.wrap(db);
            for (int i = 0; i < before; i++) {
                wrapped.getCollection("audit").insertOne(new Document("n", i));   // writes the site must not count
            }
            wrapped.getCollection("accounts").updateOne(eq("_id", "a"), Updates.inc("n", 1));
            wrapped.getCollection("accounts").insertOne(new Document("_id", "b" + before));

            assertThatThrownBy(() -> wrapped.getCollection("accounts").updateOne(eq("_id", "a"),
                    Updates.inc("n", 1))).isInstanceOf(InjectedCrash.class);
            int expectedNumber = before + 3;
            assertThat(injector.faults()).singleElement().satisfies(f -> {
                assertThat(f.site().method()).isEqualTo("updateOne");
                assertThat(f.site().collection()).isEqualTo("accounts");
                assertThat(f.site().number()).isEqualTo(expectedNumber);
            });
        }
    }

    @Test
    void shouldFaultOnlyTheOccurrenceAPredicateNames(MongoDatabase db) {
        FaultInjector injector = FaultInjector.at(site -> site.collection().startsWith("ledger"), 3,
                FaultMode.TRANSIENT_BEFORE);
        MongoDatabase wrapped = injector.wrap(db);
        wrapped.getCollection("ledger").insertOne(new Document());
        wrapped.getCollection("other").insertOne(new Document());
        wrapped.getCollection("ledgerAccounts").insertOne(new Document());

        assertThatThrownBy(() -> wrapped.getCollection("ledger").insertOne(new Document()))
                .isInstanceOf(MongoException.class);
        wrapped.getCollection("ledger").insertOne(new Document());
        assertThat(injector.faults()).hasSize(1);
        assertThatThrownBy(() -> FaultInjector.atWrite(null, null, 0, FaultMode.CRASH_AFTER))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
