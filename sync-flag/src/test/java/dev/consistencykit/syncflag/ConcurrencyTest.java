package dev.consistencykit.syncflag;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

@ExtendWith(MongoTestExtension.class)
class ConcurrencyTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    /** The sweepers' threshold: far longer than a sweep takes, so a flag refreshed by one is fresh for the other. */
    private static final Duration STALE = Duration.ofMinutes(5);

    /** Makes every flag an hour old, as if its owner had gone quiet long ago, without waiting. */
    private static void backdateFlags(MongoDatabase db) {
        db.getCollection(Blog.USERS).updateMany(com.mongodb.client.model.Filters.exists("syncing"),
                Updates.set("syncing.at", java.util.Date.from(java.time.Instant.now().minus(Duration.ofHours(1)))));
    }

    private static MasterUpdate rename(String op, String user, String name) {
        return new MasterUpdate(OperationId.of(op), user, Updates.set("name", name));
    }

    private static Document flagOf(MongoDatabase db, String user) {
        return db.getCollection(Blog.USERS).find(eq("_id", user)).first().get("syncing", Document.class);
    }

    /** Starts {@code change} through a process that pauses before its write number {@code site}. */
    private static CompletableFuture<OperationResult> pausedAt(MongoDatabase db, int site, MasterUpdate change,
                                                               FaultInjector[] holder) throws InterruptedException {
        FaultInjector zombie = FaultInjector.at(site, FaultMode.PAUSE);
        holder[0] = zombie;
        SyncFlag sync = Blog.sync(zombie.wrap(db)).build();
        CompletableFuture<OperationResult> result = CompletableFuture.supplyAsync(() -> sync.apply(change));
        assertThat(zombie.awaitPaused(WAIT)).as("paused before write #" + site).isTrue();
        return result;
    }

    @Test
    void shouldNeverPutAnOlderValueBackWhenAPausedRenameWakesAfterANewerOne(MongoDatabase db) throws Exception {
        for (int site : new int[] {2, 3}) {
            MongoTarget.drop(db);
            Blog.seed(db, 3, 2);
            FaultInjector[] zombie = new FaultInjector[1];
            CompletableFuture<OperationResult> older = pausedAt(db, site, rename("old", "u0", "Ann Old"), zombie);

            Blog.sync(db).build().apply(rename("new", "u0", "Ann New"));
            zombie[0].release();
            older.get(WAIT.toSeconds(), TimeUnit.SECONDS);

            assertThat(Blog.nameOf(db, "u0")).isEqualTo("Ann New");
            assertThat(Blog.invariants(db)).as("paused before write #" + site).isEmpty();
        }
    }

    @Test
    void shouldNotClearANewerUpdatesFlagWhenAnOlderUpdateFinishesLate(MongoDatabase db) throws Exception {
        Blog.seed(db, 3, 2);
        FaultInjector[] zombie = new FaultInjector[1];
        CompletableFuture<OperationResult> older = pausedAt(db, 4, rename("old", "u0", "Ann Old"), zombie);

        // the newer update is recorded and its process dies before propagating
        Blog.sync(db).build().submit(rename("new", "u0", "Ann New"));
        zombie[0].release();
        older.get(WAIT.toSeconds(), TimeUnit.SECONDS);

        assertThat(flagOf(db, "u0")).as("the newer update's flag stays for the sweeper").isNotNull()
                .extracting(f -> f.get("op")).isEqualTo("new");
        assertThat(Blog.sync(db).build().recover(Duration.ZERO).rolledForward()).isEqualTo(1);
        assertThat(Blog.invariants(db)).isEmpty();
        assertThat(Blog.nameOf(db, "u0")).isEqualTo("Ann New");
    }

    @Test
    void shouldLetOneOfTwoSweepersTakeOverAFlagWhileItsUpdateIsStillRunning(MongoDatabase db) throws Exception {
        Blog.seed(db, 3, 2);
        FaultInjector[] zombie = new FaultInjector[1];
        CompletableFuture<OperationResult> live = pausedAt(db, 3, rename("op", "u0", "Ann Smith"), zombie);
        backdateFlags(db);

        SyncFlag one = Blog.sync(db).staleAfter(STALE).build();
        SyncFlag two = Blog.sync(db).staleAfter(STALE).build();
        CompletableFuture<RecoveryReport> first = CompletableFuture.supplyAsync(one::recover);
        CompletableFuture<RecoveryReport> second = CompletableFuture.supplyAsync(two::recover);
        int takenOver = first.get().rolledForward() + second.get().rolledForward();
        zombie[0].release();
        OperationResult result = live.get(WAIT.toSeconds(), TimeUnit.SECONDS);

        assertThat(takenOver).as("the flag's fresh time after the first take-over turns the second away").isEqualTo(1);
        assertThat(result.isCommitted()).isTrue();
        assertThat(Blog.invariants(db)).isEmpty();
        assertThat(Blog.nameOf(db, "u0")).isEqualTo("Ann Smith");
    }

    @Test
    void shouldRepairEveryMasterOnceWhenTwoSweepersRunAtOnce(MongoDatabase db) throws Exception {
        Blog.seed(db, 30, 2);
        SyncFlag writer = Blog.sync(db).build();
        for (int i = 0; i < 30; i++) {
            writer.submit(rename("op" + i, "u" + i, "Renamed " + i));
        }
        assertThat(Blog.copiesMatch(db)).hasSize(30 * 2 + 30 * 3);
        backdateFlags(db);

        List<CompletableFuture<RecoveryReport>> sweeps = new ArrayList<>();
        for (int s = 0; s < 2; s++) {
            SyncFlag sweeper = Blog.sync(db).staleAfter(STALE).sweepBatch(7).build();
            sweeps.add(CompletableFuture.supplyAsync(sweeper::recover));
        }
        int forward = 0;
        for (CompletableFuture<RecoveryReport> sweep : sweeps) {
            forward += sweep.get().rolledForward();
        }

        assertThat(forward).isEqualTo(30);
        assertThat(Blog.invariants(db)).isEmpty();
    }

    @Test
    void shouldConvergeWhateverTheClockSkewBetweenUpdaterAndSweeper(MongoDatabase db) throws Exception {
        Blog.seed(db, 3, 2);
        ServerClock behind = ServerClock.unsynchronized(Clock.offset(Clock.systemUTC(), Duration.ofHours(-3)));
        ServerClock ahead = ServerClock.unsynchronized(Clock.offset(Clock.systemUTC(), Duration.ofHours(5)));
        FaultInjector zombie = FaultInjector.atWrite("updateMany", "comments", 1, FaultMode.PAUSE);
        SyncFlag updater = Blog.sync(zombie.wrap(db)).serverClock(behind).build();
        CompletableFuture<OperationResult> live = CompletableFuture.supplyAsync(
                () -> updater.apply(rename("op", "u0", "Ann Smith")));
        assertThat(zombie.awaitPaused(WAIT)).isTrue();

        SyncFlag late = Blog.sync(db).serverClock(behind).build();
        assertThat(late.recover().examined()).as("a sweeper whose clock is behind takes over nothing yet").isZero();
        SyncFlag early = Blog.sync(db).serverClock(ahead).build();
        assertThat(early.recover().rolledForward()).as("a sweeper whose clock is ahead takes over at once").isEqualTo(1);
        Blog.sync(db).build().apply(rename("op2", "u0", "Ann Jones"));
        zombie.release();
        live.get(WAIT.toSeconds(), TimeUnit.SECONDS);

        assertThat(Blog.invariants(db)).isEmpty();
        assertThat(Blog.nameOf(db, "u0")).isEqualTo("Ann Jones");
    }
}
