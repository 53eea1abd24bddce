package dev.consistencykit.core.spi;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.ServerDatabases;

/** The core's conditional-update helpers, against a real wire-protocol server. */
@ExtendWith(ServerDatabases.class)
class ConditionalUpdatesServerTest {

    private static MongoCollection<Document> account(MongoDatabase db, long balance) {
        MongoCollection<Document> c = db.getCollection("accounts");
        c.insertOne(new Document("_id", "a").append("balance", balance).append("pending", List.of())
                .append("settled", List.of()));
        return c;
    }

    private static Document read(MongoCollection<Document> c, Object id) {
        return c.find(eq("_id", id)).first();
    }

    // ---- state transitions ----------------------------------------------------------------------------------

    @Test
    void shouldHaveExactlyOneWinnerWhenTransitionRacedBy16Threads(MongoDatabase db) throws Exception {
        MongoCollection<Document> tx = db.getCollection("tx");
        for (int round = 0; round < 20; round++) {
            tx.insertOne(new Document("_id", round).append("state", "pending"));
        }
        for (int round = 0; round < 20; round++) {
            int id = round;
            List<UpdateOutcome> outcomes = race(16, t -> () -> ConditionalUpdates.transition(tx, id,
                    Transition.of("state", "pending", "applied").alsoUpdating(Updates.set("winner", t))).outcome());

            assertThat(outcomes).filteredOn(o -> o == UpdateOutcome.APPLIED).hasSize(1);
            assertThat(outcomes).filteredOn(o -> o == UpdateOutcome.ALREADY_APPLIED).hasSize(15);
            Document after = read(tx, id);
            assertThat(after.getString("state")).isEqualTo("applied");
            assertThat(after.get("winner")).isNotNull();
        }
    }

    @Test
    void shouldStampServerTimeWhenTransitioning(MongoDatabase db) {
        MongoCollection<Document> tx = db.getCollection("tx");
        tx.insertOne(new Document("_id", 1).append("state", "pending"));
        Instant before = ServerClock.of(db).now().minusSeconds(1);

        GuardedResult result = ConditionalUpdates.transition(tx, 1, Transition.of("state", "pending", "applied"));

        assertThat(result.outcome()).isEqualTo(UpdateOutcome.APPLIED);
        assertThat(result.document()).get().extracting(d -> d.getString("state")).isEqualTo("applied");
        Date stamped = read(tx, 1).getDate("lastModified");
        assertThat(stamped.toInstant()).isAfterOrEqualTo(before).isBefore(before.plusSeconds(30));
    }

    @Test
    void shouldReportGuardFailedWithCurrentStateWhenInAnotherState(MongoDatabase db) {
        MongoCollection<Document> tx = db.getCollection("tx");
        tx.insertOne(new Document("_id", 1).append("state", "canceling"));

        GuardedResult result = ConditionalUpdates.transition(tx, 1, Transition.of("state", "pending", "applied"));

        assertThat(result.outcome()).isEqualTo(UpdateOutcome.GUARD_FAILED);
        assertThat(result.document()).get().extracting(d -> d.getString("state")).isEqualTo("canceling");
        assertThat(read(tx, 1).getString("state")).isEqualTo("canceling");
    }

    @Test
    void shouldReportGuardFailedWhenExtraGuardRefuses(MongoDatabase db) {
        MongoCollection<Document> tx = db.getCollection("tx");
        tx.insertOne(new Document("_id", 1).append("state", "pending").append("owner", "x"));

        GuardedResult refused = ConditionalUpdates.transition(tx, 1,
                Transition.of("state", "pending", "applied").guardedBy(eq("owner", "y")));
        GuardedResult allowed = ConditionalUpdates.transition(tx, 1,
                Transition.of("state", "pending", "applied").guardedBy(eq("owner", "x")));

        assertThat(refused.outcome()).isEqualTo(UpdateOutcome.GUARD_FAILED);
        assertThat(allowed.outcome()).isEqualTo(UpdateOutcome.APPLIED);
    }

    @Test
    void shouldReportMissingWhenNoSuchDocument(MongoDatabase db) {
        MongoCollection<Document> tx = db.getCollection("tx");

        GuardedResult result = ConditionalUpdates.transition(tx, "nope", Transition.of("state", "pending", "applied"));

        assertThat(result.outcome()).isEqualTo(UpdateOutcome.MISSING);
        assertThat(result.document()).isEmpty();
        assertThat(tx.countDocuments()).isZero();
    }

    @Test
    void shouldTransitionFromAnyListedState(MongoDatabase db) {
        MongoCollection<Document> tx = db.getCollection("tx");
        tx.insertOne(new Document("_id", 1).append("state", "canceling"));

        GuardedResult result = ConditionalUpdates.transition(tx, 1,
                Transition.of("state", List.of("pending", "canceling"), "canceled"));

        assertThat(result.outcome()).isEqualTo(UpdateOutcome.APPLIED);
        assertThat(read(tx, 1).getString("state")).isEqualTo("canceled");
    }

    // ---- apply-once / settle-once / fence -------------------------------------------------------------------

    // ---- leases and fencing tokens --------------------------------------------------------------------------

    @Test
    void shouldTakeOverExpiredLeaseWithHigherTokenAndRefuseOldToken(MongoDatabase db) {
        MongoCollection<Document> jobs = db.getCollection("jobs");
        jobs.insertOne(new Document("_id", "j").append("state", "TODO"));
        ServerClock clock = ServerClock.of(db);

        Claim first = ConditionalUpdates.claim(jobs, eq("state", "TODO"), null, "w1", Duration.ofMillis(1), clock,
                LeaseFields.DEFAULT, null).orElseThrow();
        sleep(20);
        Claim second = ConditionalUpdates.claim(jobs, eq("state", "TODO"), null, "w2", Duration.ofMinutes(5), clock,
                LeaseFields.DEFAULT, null).orElseThrow();

        assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
        GuardedResult stale = ConditionalUpdates.fenced(jobs, "j", LeaseFields.DEFAULT, first.fencingToken(), null,
                Updates.set("state", "DONE"));
        assertThat(stale.outcome()).isEqualTo(UpdateOutcome.GUARD_FAILED);
        assertThat(read(jobs, "j").getString("state")).isEqualTo("TODO");
        assertThat(read(jobs, "j").getString("owner")).isEqualTo("w2");

        GuardedResult current = ConditionalUpdates.fenced(jobs, "j", LeaseFields.DEFAULT, second.fencingToken(), null,
                Updates.set("state", "DONE"));
        assertThat(current.outcome()).isEqualTo(UpdateOutcome.APPLIED);
        assertThat(read(jobs, "j").getString("state")).isEqualTo("DONE");
    }

    @Test
    void shouldNotTakeOverLeaseThatHasNotExpired(MongoDatabase db) {
        MongoCollection<Document> jobs = db.getCollection("jobs");
        jobs.insertOne(new Document("_id", "j").append("state", "TODO"));
        ServerClock clock = ServerClock.of(db);
        assertThat(ConditionalUpdates.claim(jobs, eq("state", "TODO"), null, "w1", Duration.ofMinutes(5), clock,
                LeaseFields.DEFAULT, null)).isPresent();

        Optional<Claim> second = ConditionalUpdates.claim(jobs, eq("state", "TODO"), null, "w2",
                Duration.ofMinutes(5), clock, LeaseFields.DEFAULT, null);

        assertThat(second).isEmpty();
        assertThat(read(jobs, "j").getString("owner")).isEqualTo("w1");
    }

    @Test
    void shouldNotTakeOverLeaseWhenClaimerClockRunsBehind(MongoDatabase db) {
        // A claimer whose clock is an hour slow still judges expiry by server time.
        MongoCollection<Document> jobs = db.getCollection("jobs");
        jobs.insertOne(new Document("_id", "j").append("state", "TODO"));
        assertThat(ConditionalUpdates.claim(jobs, eq("state", "TODO"), null, "w1", Duration.ofMinutes(5),
                ServerClock.of(db), LeaseFields.DEFAULT, null)).isPresent();
        ServerClock skewed = ServerClock.of(db, Clock.offset(Clock.systemUTC(), Duration.ofHours(1)));

        Optional<Claim> second = ConditionalUpdates.claim(jobs, eq("state", "TODO"), null, "w2",
                Duration.ofMinutes(5), skewed, LeaseFields.DEFAULT, null);

        assertThat(second).isEmpty();
    }

    @Test
    void shouldClaimEachDocumentOnceInSortOrderWhenRacedBy16Threads(MongoDatabase db) throws Exception {
        MongoCollection<Document> jobs = db.getCollection("jobs");
        List<Document> docs = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            docs.add(new Document("_id", i).append("state", "TODO").append("priority", i % 3));
        }
        jobs.insertMany(docs);
        ServerClock clock = ServerClock.of(db);

        // as the class documents, the caller retries: a real engine answers racing claims with deadlocks and
        // serialization failures, and a retry looks first for what an earlier attempt of the same claim holds
        RetryPolicy retries = RetryPolicy.DEFAULT.withMaxAttempts(50);
        List<List<Object>> claimedPerThread = race(16, t -> () -> {
            List<Object> mine = new ArrayList<>();
            for (int n = 0; ; n++) {
                String owner = "w" + t + "-" + n;
                boolean[] sent = {false};
                Optional<Claim> claim = retries.execute("race", null, "claim", () -> {
                    Optional<Claim> held = sent[0] ? ConditionalUpdates.heldBy(jobs, eq("state", "PROCESSING"),
                            owner, LeaseFields.DEFAULT) : Optional.empty();
                    sent[0] = true;
                    return held.isPresent() ? held : ConditionalUpdates.claim(jobs, eq("state", "TODO"),
                            Sorts.descending("priority"), owner, Duration.ofMinutes(5), clock, LeaseFields.DEFAULT,
                            Updates.set("state", "PROCESSING"));
                });
                if (claim.isEmpty()) {
                    return mine;
                }
                assertThat(claim.get().fencingToken()).isEqualTo(1);
                mine.add(claim.get().id());
            }
        });

        List<Object> all = claimedPerThread.stream().flatMap(List::stream).toList();
        assertThat(all).hasSize(300).doesNotHaveDuplicates();
        assertThat(jobs.countDocuments(eq("state", "TODO"))).isZero();
    }

    @Test
    void shouldRenewAndReleaseOnlyWithCurrentToken(MongoDatabase db) {
        MongoCollection<Document> jobs = db.getCollection("jobs");
        jobs.insertOne(new Document("_id", "j").append("state", "TODO"));
        ServerClock clock = ServerClock.of(db);
        Claim claim = ConditionalUpdates.claim(jobs, eq("state", "TODO"), null, "w1", Duration.ofSeconds(5), clock,
                LeaseFields.DEFAULT, null).orElseThrow();
        Date before = read(jobs, "j").getDate("leaseExpiresAt");

        assertThat(ConditionalUpdates.renew(jobs, "j", LeaseFields.DEFAULT, claim.fencingToken(),
                Duration.ofMinutes(10), clock).outcome()).isEqualTo(UpdateOutcome.APPLIED);
        assertThat(read(jobs, "j").getDate("leaseExpiresAt")).isAfter(before);
        assertThat(ConditionalUpdates.release(jobs, "j", LeaseFields.DEFAULT, claim.fencingToken() + 1, null)
                .outcome()).isEqualTo(UpdateOutcome.GUARD_FAILED);
        assertThat(ConditionalUpdates.release(jobs, "j", LeaseFields.DEFAULT, claim.fencingToken(), null)
                .outcome()).isEqualTo(UpdateOutcome.APPLIED);
        Document released = read(jobs, "j");
        assertThat(released.containsKey("owner")).isFalse();
        assertThat(released.getLong("fencingToken")).isEqualTo(claim.fencingToken());
    }

    // ---- bad input ------------------------------------------------------------------------------------------

    @Test
    void shouldRejectDocumentIdBeforeAnyWrite(MongoDatabase db) {
        MongoCollection<Document> accounts = account(db, 100);
        List<Document> before = accounts.find().into(new ArrayList<>());

        assertThatThrownBy(() -> ConditionalUpdates.transition(accounts, new Document("$ne", "x"),
                Transition.of("state", "a", "b")))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("key '$ne' in id must not start with '$'");
        assertThatThrownBy(() -> ConditionalUpdates.transition(accounts, new Document("$gt", ""),
                Transition.of("state", "a", "b"))).isInstanceOf(InvalidInputException.class);

        assertThat(accounts.find().into(new ArrayList<>())).isEqualTo(before);
        assertThat(db.listCollectionNames().into(new ArrayList<>())).containsExactly(accounts.getNamespace()
                .getCollectionName());
    }

    // ---- helpers --------------------------------------------------------------------------------------------

    @FunctionalInterface
    private interface Task<T> {
        Callable<T> create(int thread);
    }

    private static <T> List<T> race(int threads, Task<T> task) throws Exception {
        ExecutorService executor = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Callable<T> c = task.create(t);
                futures.add(executor.submit(() -> {
                    start.await();
                    return c.call();
                }));
            }
            start.countDown();
            List<T> results = new ArrayList<>();
            for (Future<T> f : futures) {
                results.add(f.get());
            }
            return results;
        } finally {
            executor.shutdownNow();
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

}
