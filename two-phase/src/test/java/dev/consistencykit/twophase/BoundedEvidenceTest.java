package dev.consistencykit.twophase;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.EffectMarker;
import dev.consistencykit.core.spi.MarkerWrite;
import dev.consistencykit.core.spi.OnceEffects;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * What a transaction leaves on its participants: nothing once it has settled, so a hot account stays the same size
 * however many transfers it takes, and a paused owner is refused however late it wakes, with no tombstone to rely on.
 */
@ExtendWith(MongoTestExtension.class)
class BoundedEvidenceTest {

    private static final Map<String, Long> ACCOUNTS = Bank.accounts(3, 1_000);

    private static TwoPhaseCommit tpc(MongoDatabase db) {
        return TwoPhaseCommit.builder(db).retryPolicy(TestPolicies.FAST_RETRY).build();
    }

    private static List<Document> accounts(MongoDatabase db) {
        return db.getCollection(Bank.ACCOUNTS).find().into(new ArrayList<>());
    }

    @Test
    void shouldLeaveNoBookkeepingFieldOnParticipantsOnceTransactionsSettleAloneOrOverlapping(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        List<Document> seeded = accounts(db);
        tpc(db).transfer(Transfer.of(OperationId.of("alone"), "a0", "a1", 10));
        tpc(db).transfer(Transfer.of(OperationId.of("back"), "a1", "a0", 10));
        assertThat(accounts(db)).as("no empty arrays left").isEqualTo(seeded);

        // one transaction left half-way by a crash while others come and go on the same accounts
        FaultInjector crash = FaultInjector.atWrite("bulkWrite", Bank.ACCOUNTS, 2, FaultMode.CRASH_BEFORE);
        try {
            tpc(crash.wrap(db)).transfer(Transfer.of(OperationId.of("half"), "a0", "a1", 5));
        } catch (Error expected) {
            // left for recovery
        }
        tpc(db).transfer(Transfer.of(OperationId.of("beside"), "a1", "a0", 5));
        tpc(db).recover(Duration.ZERO);
        tpc(db).transfer(Transfer.of(OperationId.of("after"), "a2", "a0", 1));
        tpc(db).transfer(Transfer.of(OperationId.of("return"), "a0", "a2", 1));

        assertThat(accounts(db)).as("nothing empty once every transaction settled")
                .allSatisfy(a -> assertThat(a.keySet()).containsExactly("_id", "balance"));
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
    }

    /**
     * The zombie's record write was acknowledged before it paused, so its instance's maintenance, running in another
     * thread meanwhile, released the record ({@link dev.consistencykit.core.spi.RecordReleases}): pruning may then remove
     * it, and what refuses the zombie is its fencing, not the record.
     */
    private static void releasedByItsInstance(MongoDatabase db) {
        db.getCollection(Bank.TRANSACTIONS).updateMany(new Document(), com.mongodb.client.model.Updates.unset(
                dev.consistencykit.core.spi.RecordReleases.FIELD));
    }

    @Test
    void shouldRefuseAZombieOwnerWhenRecoveryFinishedAndPruningRemovedEveryTrace(MongoDatabase db) throws Exception {
        // write #2 is the reservation, #3 the prepare: the owner pauses just before sending one of them
        for (int site : new int[] {2, 3}) {
            MongoDatabase fresh = MongoTarget.fromEnvironment().client().getDatabase(db.getName() + "_" + site);
            Bank.seed(fresh, ACCOUNTS);
            FaultInjector zombie = FaultInjector.at(site, FaultMode.PAUSE);
            CompletableFuture<OperationResult> owner = CompletableFuture.supplyAsync(
                    () -> tpc(zombie.wrap(fresh)).transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 100)));
            assertThat(zombie.awaitPaused(Duration.ofSeconds(10))).isTrue();

            RecoveryReport recovered = tpc(fresh).recover(Duration.ZERO);
            releasedByItsInstance(fresh);
            TwoPhaseCommit twoDaysLater = TwoPhaseCommit.builder(fresh).retention(Duration.ofDays(1))
                    .serverClock(ServerClock.unsynchronized(Clock.offset(Clock.systemUTC(), Duration.ofDays(2))))
                    .build();
            int pruned = twoDaysLater.prune();
            List<Document> before = accounts(fresh);
            zombie.release();
            OperationResult late = owner.get(30, TimeUnit.SECONDS);

            assertThat(recovered.rolledBack()).as("site " + site).isEqualTo(1);
            assertThat(pruned).as("site " + site).isEqualTo(1);
            assertThat(fresh.getCollection(Bank.TRANSACTIONS).countDocuments()).as("site " + site).isZero();
            assertThat(before).as("no trace of t1 before the zombie wakes, site " + site).allSatisfy(a -> {
                assertThat(a.getList("pendingTransactions", Object.class, List.of())).isEmpty();
                assertThat(a.getList("reservedTransactions", Object.class, List.of())).isEmpty();
                assertThat(a.containsKey("settledTransactions")).isFalse();
            });
            assertThat(late.isCommitted()).as("site " + site).isFalse();
            // a late reservation is the one write of the zombie that lands (it carries no effect, by design); the
            // zombie's check then fails and it takes the reservation back, leaving at most an empty array
            assertThat(withoutEmptyArrays(accounts(fresh))).as("the zombie changed nothing, site " + site)
                    .isEqualTo(withoutEmptyArrays(before));
            assertThat(Bank.balance(fresh, "a0")).isEqualTo(1_000);
            assertThat(Bank.invariants(fresh, ACCOUNTS, true)).as("site " + site).isEmpty();
            MongoTarget.drop(fresh);
        }
    }

    /**
     * A late owner is refused before it changes anything, not caught afterwards: at every write it sends after it
     * wakes (read just before the write leaves), and after it returns, the balances are what its transaction's
     * decision made them, whether recovery rolled it back or forward and whether the record is still kept (its
     * writer holds it, compacted) or pruned. A design that fences at the decision instead of before the prepare (one
     * round trip fewer, docs/two-phase-round-trips.md) applies the late prepare, so the transfer is debited twice
     * until it is taken back; every raw read and every guard on the account sees it in that time.
     */
    @Test
    void shouldNeverShowALateOwnersPrepareOnAnAccountNotEvenForAMoment(MongoDatabase db) throws Exception {
        int run = 0;
        for (StalePendingPolicy policy : StalePendingPolicy.values()) {
            for (boolean pruned : new boolean[] {false, true}) {
                MongoDatabase fresh = MongoTarget.fromEnvironment().client().getDatabase(db.getName() + "_" + run++);
                Bank.seed(fresh, ACCOUNTS);
                String what = policy + (pruned ? ", pruned" : ", kept");
                List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
                java.util.concurrent.atomic.AtomicBoolean woken = new java.util.concurrent.atomic.AtomicBoolean();
                java.util.concurrent.atomic.AtomicInteger reservations = new java.util.concurrent.atomic.AtomicInteger();
                FaultInjector zombie = FaultInjector.withSchedule(site -> {
                    if (woken.get()) {
                        seen.add(site + ": " + Bank.balance(fresh, "a0") + ", " + Bank.balance(fresh, "a1"));
                        return java.util.Optional.empty();
                    }
                    // the owner recorded t1 and pauses before its reservation
                    boolean first = "bulkWrite".equals(site.method()) && Bank.ACCOUNTS.equals(site.collection())
                            && reservations.incrementAndGet() == 1;
                    return first ? java.util.Optional.of(FaultMode.PAUSE) : java.util.Optional.empty();
                });
                CompletableFuture<OperationResult> owner = CompletableFuture.supplyAsync(
                        () -> tpc(zombie.wrap(fresh)).transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 100)));
                assertThat(zombie.awaitPaused(Duration.ofSeconds(10))).as(what).isTrue();

                TwoPhaseCommit.builder(fresh).retryPolicy(TestPolicies.FAST_RETRY).stalePendingPolicy(policy).build()
                        .recover(Duration.ZERO);
                if (pruned) {
                    releasedByItsInstance(fresh);
                }
                TwoPhaseCommit.builder(fresh).retention(Duration.ofDays(1)).serverClock(ServerClock.unsynchronized(
                        Clock.offset(Clock.systemUTC(), Duration.ofDays(2)))).build().prune();
                boolean done = policy == StalePendingPolicy.ROLL_FORWARD;
                String decided = done ? "900, 1100" : "1000, 1000";
                assertThat(Bank.balance(fresh, "a0") + ", " + Bank.balance(fresh, "a1")).as(what).isEqualTo(decided);
                assertThat(fresh.getCollection(Bank.TRANSACTIONS).countDocuments()).as(what).isEqualTo(pruned ? 0 : 1);
                woken.set(true);
                zombie.release();
                OperationResult late = owner.get(30, TimeUnit.SECONDS);
                seen.add("returned: " + Bank.balance(fresh, "a0") + ", " + Bank.balance(fresh, "a1"));

                assertThat(late.isCommitted()).as(what).isEqualTo(done && !pruned);
                assertThat(seen).as("balances before each write of the woken owner, " + what).hasSizeGreaterThan(1)
                        .allSatisfy(s -> assertThat(s).endsWith(": " + decided));
                // (the audit cannot count a compacted record's effects: checked on the accounts themselves)
                assertThat(withoutEmptyArrays(accounts(fresh))).as("nothing left on an account, " + what)
                        .allSatisfy(a -> assertThat(a.keySet()).containsExactly("_id", "balance"));
                MongoTarget.drop(fresh);
            }
        }
    }

    @Test
    void shouldRefuseAZombieWhoseTransactionIdWasReusedAfterItWasPruned(MongoDatabase db) throws Exception {
        Bank.seed(db, ACCOUNTS);
        // owner 1 recorded t1 (a0 -> a1, 100) and pauses before reserving its participants (write #2)
        FaultInjector zombie = FaultInjector.atWrite("bulkWrite", "accounts", 1, FaultMode.PAUSE);
        CompletableFuture<OperationResult> first = CompletableFuture.supplyAsync(
                () -> tpc(zombie.wrap(db)).transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 100)));
        assertThat(zombie.awaitPaused(Duration.ofSeconds(10))).isTrue();
        tpc(db).recover(Duration.ZERO);
        releasedByItsInstance(db);
        assertThat(TwoPhaseCommit.builder(db).retention(Duration.ofDays(1)).serverClock(ServerClock.unsynchronized(
                Clock.offset(Clock.systemUTC(), Duration.ofDays(2)))).build().prune()).isEqualTo(1);
        // the id is free again: owner 2 records another t1 (a1 -> a2, 50) and pauses at the same point
        FaultInjector second = FaultInjector.atWrite("bulkWrite", "accounts", 1, FaultMode.PAUSE);
        CompletableFuture<OperationResult> reused = CompletableFuture.supplyAsync(
                () -> tpc(second.wrap(db)).transfer(Transfer.of(OperationId.of("t1"), "a1", "a2", 50)));
        assertThat(second.awaitPaused(Duration.ofSeconds(10))).isTrue();

        zombie.release();
        OperationResult late = first.get(30, TimeUnit.SECONDS);
        second.release();
        OperationResult result = reused.get(30, TimeUnit.SECONDS);

        assertThat(late.isCommitted()).as("the zombie must not drive the new t1 with its old spec").isFalse();
        assertThat(result.isCommitted()).isTrue();
        assertThat(Bank.balance(db, "a0")).isEqualTo(1_000);
        assertThat(Bank.balance(db, "a1")).isEqualTo(950);
        assertThat(Bank.balance(db, "a2")).isEqualTo(1_050);
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
    }

    @Test
    void shouldNotLetAnOverTakenRecovererTakeBackTheReservationsOfTheOneThatOvertookIt(MongoDatabase db)
            throws Exception {
        Bank.seed(db, ACCOUNTS);
        // the owner reserved both accounts and died before its prepare (write #3)
        assertThatThrownByCrash(() -> rollForward(FaultInjector.atWrite("bulkWrite", "accounts", 2,
                FaultMode.CRASH_BEFORE).wrap(db))
                .transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 100)));
        // recoverer 1 takes the transaction over (token 2) and pauses before reserving (its write #2)
        FaultInjector first = FaultInjector.atWrite("bulkWrite", "accounts", 1, FaultMode.PAUSE);
        CompletableFuture<RecoveryReport> one = CompletableFuture.supplyAsync(
                () -> rollForward(first.wrap(db)).recover(Duration.ZERO));
        assertThat(first.awaitPaused(Duration.ofSeconds(10))).isTrue();
        // recoverer 2 takes it over from recoverer 1 (token 3), takes both reservations, pauses before its prepare
        // (claim #1, reserve #2, take over a0 #3 and a1 #4, prepare #5)
        FaultInjector second = FaultInjector.atWrite("bulkWrite", "accounts", 2, FaultMode.PAUSE);
        CompletableFuture<RecoveryReport> two = CompletableFuture.supplyAsync(
                () -> rollForward(second.wrap(db)).recover(Duration.ZERO));
        assertThat(second.awaitPaused(Duration.ofSeconds(10))).isTrue();

        first.release();
        one.get(30, TimeUnit.SECONDS);
        second.release();
        two.get(30, TimeUnit.SECONDS);

        Document tx = db.getCollection(Bank.TRANSACTIONS).find(eq("_id", "t1")).first();
        assertThat(tx.getString("state")).as("the later recoverer finished it").isEqualTo("done");
        assertThat(Bank.balance(db, "a1")).isEqualTo(1_100);
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
    }

    private static TwoPhaseCommit rollForward(MongoDatabase db) {
        return TwoPhaseCommit.builder(db).retryPolicy(TestPolicies.FAST_RETRY)
                .stalePendingPolicy(StalePendingPolicy.ROLL_FORWARD).build();
    }

    private static void assertThatThrownByCrash(Runnable dying) {
        org.assertj.core.api.Assertions.assertThatThrownBy(dying::run).isInstanceOf(Error.class);
    }

    @Test
    void shouldReleaseTheReservationOfAZombieThatDiedRightAfterSendingItLate(MongoDatabase db) {
        Bank.seed(db, ACCOUNTS);
        assertThat(tpc(db).transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 100)).isCommitted()).isTrue();
        // the reservation request of an owner that paused before sending it, sent now, after which it died
        OnceEffects.reserve(db.getCollection(Bank.ACCOUNTS), EffectMarker.of("reservedTransactions",
                "pendingTransactions"), "t1", "dead-owner/1", List.of(MarkerWrite.of("a0", null),
                MarkerWrite.of("a1", null)));
        assertThat(tpc(db).audit("balance").problems()).as("audit sees the leftover").isNotEmpty();

        tpc(db).recover(Duration.ZERO);

        assertThat(accounts(db)).allSatisfy(a -> assertThat(a.getList("reservedTransactions", Object.class,
                List.of())).isEmpty());
        assertThat(Bank.balance(db, "a1")).isEqualTo(1_100);
        assertThat(Bank.invariants(db, ACCOUNTS, true)).isEmpty();
    }

    @Test
    void shouldTellIdsApartThatOnlyPrintAlikeAndRefuseOnesThatAreEqual(MongoDatabase db) {
        db.getCollection(Bank.ACCOUNTS).insertMany(List.of(new Document("_id", "1").append("balance", 100L),
                new Document("_id", 1).append("balance", 100L)));
        TwoPhaseCommit tpc = tpc(db);

        OperationResult moved = tpc.apply(TwoPhaseTransaction.of(OperationId.of("string-to-number"),
                Participant.on(Bank.ACCOUNTS, "1").when(com.mongodb.client.model.Filters.gte("balance", 10L))
                        .prepare(com.mongodb.client.model.Updates.inc("balance", -10L))
                        .rollback(com.mongodb.client.model.Updates.inc("balance", 10L)),
                Participant.on(Bank.ACCOUNTS, 1).commit(com.mongodb.client.model.Updates.inc("balance", 10L))));

        assertThat(moved.isCommitted()).as("\"1\" and 1 are two documents").isTrue();
        assertThat(db.getCollection(Bank.ACCOUNTS).find(eq("_id", 1)).first().getLong("balance")).isEqualTo(110);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> tpc.apply(TwoPhaseTransaction.of(
                OperationId.of("same-twice"), Participant.on(Bank.ACCOUNTS, 1), Participant.on(Bank.ACCOUNTS, 1L))))
                .isInstanceOf(dev.consistencykit.core.InvalidInputException.class)
                .hasMessageContaining("a second time");
    }

    @Test
    void shouldKeepAHotAccountTheSameSizeAfterAHundredOrThreeThousandTransfers(MongoDatabase db) throws Exception {
        Map<String, Long> accounts = new LinkedHashMap<>(Bank.accounts(100, 1_000_000));
        accounts.put("merchant", 0L);
        Bank.seed(db, accounts);
        TwoPhaseCommit tpc = tpc(db);

        payMerchant(tpc, 0, 100);
        long afterHundred = size(db, "merchant");
        payMerchant(tpc, 100, 3_000);
        long afterThreeThousand = size(db, "merchant");

        assertThat(Bank.balance(db, "merchant")).isEqualTo(3_000);
        assertThat(afterThreeThousand).isEqualTo(afterHundred);
        assertThat(Bank.invariants(db, accounts, true)).isEmpty();
    }

    /** Transfers {@code from} … {@code to - 1}, each paying 1 into the merchant account, on four threads. */
    private static void payMerchant(TwoPhaseCommit tpc, int from, int to) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    for (int i = from + thread; i < to; i += 4) {
                        OperationResult r = tpc.transfer(Transfer.of(OperationId.of("p" + i), "a" + (i % 100),
                                "merchant", 1));
                        assertThat(r.isCommitted()).isTrue();
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get(5, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static List<Document> withoutEmptyArrays(List<Document> documents) {
        List<Document> out = new ArrayList<>();
        for (Document d : documents) {
            Document copy = new Document();
            d.forEach((k, v) -> {
                if (!(v instanceof List<?> l && l.isEmpty())) {
                    copy.append(k, v);
                }
            });
            out.add(copy);
        }
        return out;
    }

    private static long size(MongoDatabase db, String id) {
        return db.getCollection(Bank.ACCOUNTS).withDocumentClass(RawBsonDocument.class).find(eq("_id", id)).first()
                .getByteBuffer().remaining();
    }
}
