package dev.consistencykit.jobqueue;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.codecs.pojo.annotations.BsonId;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.InterleavingExplorer;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * The outbox for new documents: an order inserted (or upserted) together with its shipping job in one write, crashed
 * at each write, interleaved with every other actor, and its caller paused past the relay, the run, the pruner and
 * the order's deletion. Exactly one job per order, each run once, nothing left on the order.
 */
@ExtendWith(MongoTestExtension.class)
class OutboxInsertTest {

    static final String ORDERS = "orders";

    /** The shipping job of {@code order}: counts one on counter c0, the test's record of every run. */
    static JobRequest ship(String order) {
        return JobRequest.of("count", new Document("counter", "c0")).withId(OperationId.of("ship-" + order));
    }

    /** A typed order, encoded by the collection's codec registry (records are in the driver's default one). */
    public record Order(@BsonId String id, String item, int quantity) {
    }

    /**
     * Each order present has exactly one job, done; each job has its order; nothing of the outbox on any order;
     * counter c0 counts exactly the jobs done (each run once: the friends' invariants check the witnesses).
     */
    static List<String> oneJobPerOrder(MongoDatabase db) {
        List<String> problems = new ArrayList<>(Friends.invariants(db));
        MongoCollection<Document> jobs = db.getCollection(JobQueueConfig.DEFAULT_COLLECTION);
        long orders = 0;
        for (Document order : db.getCollection(ORDERS).find()) {
            orders++;
            Document job = jobs.find(eq("_id", "ship-" + order.get("_id"))).first();
            if (job == null || !"done".equals(job.getString("state"))) {
                problems.add("order " + order.get("_id") + " has its job " + (job == null ? "lost" : job.toJson()));
            }
            for (String field : JobQueueConfigAccess.EFFECT_FIELDS) {
                if (order.containsKey(field)) {
                    problems.add("order " + order.get("_id") + " still carries " + field + " " + order.get(field));
                }
            }
        }
        long shipped = jobs.countDocuments();
        if (shipped != orders) {
            problems.add(orders + " orders but " + shipped + " jobs");
        }
        return problems;
    }

    /** Orders with their jobs, recovered as a fresh process does: the orders' outbox relayed, then recovery. */
    static FriendsWorkload orders(FriendsWorkload.Operation operation) {
        return FriendsWorkload.on().seededBy(db -> Friends.seedCounters(db, 1)).operation(operation)
                .recoveredBy(db -> {
                    JobQueue queue = Friends.queue(db).build();
                    queue.relayOutbox(db.getCollection(ORDERS), Duration.ZERO);
                    queue.recover(Duration.ZERO);
                })
                .checkedBy(OutboxInsertTest::oneJobPerOrder);
    }

    private static void insertOrder(MongoDatabase db, JobQueue queue) {
        queue.insertWith(db.getCollection(ORDERS), new Document("_id", "o1").append("item", "book"), ship("o1"));
        queue.processNext();
    }

    private static void upsertOrder(MongoDatabase db, JobQueue queue) {
        queue.upsertWith(db.getCollection(ORDERS), "o1", null, Updates.combine(Updates.setOnInsert("item", "book"),
                Updates.inc("revision", 1)), ship("o1"));
        queue.processNext();
    }

    @Test
    void shouldInsertTheDocumentWithItsJobAndRunItOnce(MongoDatabase db) {
        Friends.seedCounters(db, 1);
        JobQueue queue = Friends.queue(db).build();

        Optional<OperationId> id = queue.insertWith(db.getCollection(ORDERS), new Document("_id", "o1")
                .append("item", "book"), ship("o1"));
        queue.processNext();

        assertThat(id).contains(OperationId.of("ship-o1"));
        assertThat(db.getCollection(ORDERS).find().first()).isEqualTo(new Document("_id", "o1").append("item",
                "book"));
        assertThat(oneJobPerOrder(db)).isEmpty();
        assertThat(queue.insertWith(db.getCollection(ORDERS), new Document("_id", "o1").append("item", "pen"),
                ship("o1-again"))).as("the id is taken: nothing written").isEmpty();
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments()).isEqualTo(1);
    }

    @Test
    void shouldInsertSeveralJobsWithOneDocumentAndGiveADocumentWithoutIdOne(MongoDatabase db) {
        Friends.seedCounters(db, 1);
        JobQueue queue = Friends.queue(db).build();
        Document order = new Document("item", "book");

        Optional<List<OperationId>> ids = queue.insertWith(db.getCollection(ORDERS), order, List.of(ship("a"),
                ship("b")));

        assertThat(ids).contains(List.of(OperationId.of("ship-a"), OperationId.of("ship-b")));
        assertThat(order.getObjectId("_id")).as("given an ObjectId, as insertOne does").isNotNull();
        assertThat(db.getCollection(ORDERS).find(eq("_id", order.get("_id"))).first()).isEqualTo(order);
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments()).isEqualTo(2);
    }

    @Test
    void shouldEncodeATypedDocumentWithTheCollectionsCodecs(MongoDatabase db) {
        Friends.seedCounters(db, 1);
        JobQueue queue = Friends.queue(db).build();
        MongoCollection<Order> orders = db.getCollection(ORDERS, Order.class);

        queue.insertWith(orders, new Order("o7", "book", 2), ship("o7"));

        assertThat(orders.find().first()).isEqualTo(new Order("o7", "book", 2));
        assertThat(db.getCollection(ORDERS).find().first()).isEqualTo(new Document("_id", "o7").append("item", "book")
                .append("quantity", 2));
    }

    @Test
    void shouldRefuseAHostileDocumentBeforeAnyWrite(MongoDatabase db) {
        JobQueue queue = Friends.queue(db).build();
        MongoCollection<Document> orders = db.getCollection(ORDERS);

        for (Object bad : List.of(new Document("_id", "o1").append("jobOutbox", List.of()),
                new Document("_id", "o1").append("$set", new Document("x", 1)),
                new Document("_id", List.of(1, 2)),
                new Document("_id", "o1").append("a.b", 1),
                BsonDocument.parse("{item: 'no id'}"))) {
            assertThatThrownBy(() -> queue.insertWith(orders, bad, ship("x"))).as(String.valueOf(bad))
                    .isInstanceOf(InvalidInputException.class);
        }
        assertThatThrownBy(() -> queue.insertWith(orders, new Document("_id", "o1"), List.of(ship("x"), ship("x"))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("share");
        assertThatThrownBy(() -> queue.insertWith(orders, new Document("_id", "o1"), List.of()))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> queue.upsertWith(orders, "o1", null, Updates.set("jobOutboxWritten", 1), ship("x")))
                .isInstanceOf(InvalidInputException.class);
        assertThat(db.listCollectionNames().into(new ArrayList<>())).doesNotContain(ORDERS,
                JobQueueConfig.DEFAULT_COLLECTION);
    }

    @Test
    void shouldUpsertAMissingDocumentOnceAndUpdateAnExistingOneOnce(MongoDatabase db) {
        Friends.seedCounters(db, 1);
        JobQueue queue = Friends.queue(db).build();
        MongoCollection<Document> orders = db.getCollection(ORDERS);

        assertThat(queue.upsertWith(orders, "o1", eq("status", "new"), Updates.inc("revision", 1), ship("o1")))
                .contains(OperationId.of("ship-o1"));
        assertThat(orders.find().first()).as("the filter's equalities and the update make the document")
                .isEqualTo(new Document("_id", "o1").append("status", "new").append("revision", 1));
        assertThat(queue.upsertWith(orders, "o1", eq("status", "new"), Updates.inc("revision", 1), ship("o1-2")))
                .contains(OperationId.of("ship-o1-2"));
        assertThat(orders.find().first().getInteger("revision")).isEqualTo(2);
        assertThat(queue.upsertWith(orders, "o1", eq("status", "paid"), Updates.inc("revision", 1), ship("o1-3")))
                .as("there, and not matching: nothing written").isEmpty();
        assertThat(orders.find().first().getInteger("revision")).isEqualTo(2);
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments()).isEqualTo(2);
    }

    @Test
    void shouldKeepOneJobPerOrderWhenTheInsertCrashesAtAnyWrite(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client)
                .name("outbox-insert")
                .workload(orders((db, queue, random) -> insertOrder(db, queue)))
                .build().explore();

        assertThat(report.sites()).extracting(s -> s.method() + " " + s.collection()).startsWith(
                // the order with its job, the job recorded held, released to the workers, the outbox cleared
                "insertOne orders", "updateOne jobs", "updateOne jobs", "updateOne orders");
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    /**
     * After an upsert of order o1 (seeded or not): the update applied once exactly when its job exists (done), the
     * order there if the job is, nothing of the outbox left, every job run once.
     */
    static List<String> upsertedOnce(MongoDatabase db) {
        List<String> problems = new ArrayList<>(Friends.invariants(db));
        Document order = db.getCollection(ORDERS).find().first();
        Document job = db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("_id", "ship-o1")).first();
        int revision = order == null ? 0 : order.getInteger("revision", 0);
        if (revision > 1 || (revision == 1) != (job != null)) {
            problems.add("the order's update applied " + revision + " times, its job " + (job == null ? "absent"
                    : job.toJson()));
        }
        if (job != null && !"done".equals(job.getString("state"))) {
            problems.add("job " + job.toJson() + " after recovery");
        }
        for (String field : JobQueueConfigAccess.EFFECT_FIELDS) {
            if (order != null && order.containsKey(field)) {
                problems.add("the order still carries " + field + " " + order.get(field));
            }
        }
        if (db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments() > 1) {
            problems.add("more than one job");
        }
        return problems;
    }

    // heavy: on a real engine only when asked (docs/servers.md): the insert exploration beside it runs the same outbox
    // protocol on every server
    @Tag("heavy")
    @Test
    void shouldKeepOneJobPerOrderWhenAnUpsertCrashesAtAnyWrite(MongoClient client) {
        for (boolean exists : new boolean[] {false, true}) {
            CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client)
                    .name("outbox-upsert-" + (exists ? "update" : "insert"))
                    .workload(orders((db, queue, random) -> upsertOrder(db, queue)).seededBy(db -> {
                        Friends.seedCounters(db, 1);
                        if (exists) {
                            db.getCollection(ORDERS).insertOne(new Document("_id", "o1").append("item", "book"));
                        }
                    }).checkedBy(OutboxInsertTest::upsertedOnce))
                    .build().explore();

            assertThat(report.violations()).as(report.toString()).isEmpty();
        }
    }

    // heavy: on a real engine only when asked (docs/servers.md): the enqueueWith interleavings (InterleavingTest) run
    // the same outbox protocol on every server
    @Tag("heavy")
    @Test
    void shouldKeepOneJobPerOrderWhenAnyActorRunsAtAnyCallOfAnInsertOrAnUpsert(MongoTarget target) {
        for (boolean upsert : new boolean[] {false, true}) {
            FriendsWorkload.Operation operation = upsert ? (db, queue, random) -> upsertOrder(db, queue)
                    : (db, queue, random) -> insertOrder(db, queue);
            FriendsWorkload workload = orders(operation);
            InterleavingExplorer.Report report = InterleavingExplorer.builder(target)
                    .name(upsert ? "outbox-upsert" : "outbox-insert")
                    .workload(upsert ? workload.checkedBy(OutboxInsertTest::upsertedOnce) : workload)
                    .actor("relayer", db -> {
                        Friends.queue(db).build().relayOutbox(db.getCollection(ORDERS));
                        return List.of();
                    })
                    .actor("worker", db -> {
                        Friends.queue(db).build().processNext();
                        return List.of();
                    })
                    .actor("recoverer", db -> {
                        Friends.queue(db).build().recover(Duration.ZERO);
                        return List.of();
                    })
                    .actor("pruner", db -> {
                        Friends.prunerDaysAhead(db).prune();
                        return List.of();
                    })
                    .actor("second caller", db -> {
                        operation.run(db, Friends.queue(db).build(), new java.util.Random(1));
                        return List.of();
                    })
                    .build().explore();

            assertThat(report.violations()).as(report.toString()).isEmpty();
        }
    }

    @Test
    void shouldNotWriteADeletedOrderAgainWhenItsCallWakesPastTheRelayTheRunAndThePruner(MongoDatabase db)
            throws Exception {
        Friends.seedCounters(db, 1);
        // the insert lands, its reply is lost and the caller pauses before it retries
        FaultInjector lost = FaultInjector.atWrite("insertOne", ORDERS, 1, FaultMode.PAUSE_AFTER);
        CompletableFuture<Optional<OperationId>> call = CompletableFuture.supplyAsync(() -> Friends.queue(
                lost.wrap(db)).build().insertWith(lost.wrap(db).getCollection(ORDERS), new Document("_id", "o1"),
                ship("o1")));
        assertThat(lost.awaitPaused(Duration.ofSeconds(10))).isTrue();

        JobQueue other = Friends.queue(db).build();
        assertThat(other.relayOutbox(db.getCollection(ORDERS))).isEqualTo(1);
        assertThat(other.processNext()).isPresent();
        db.getCollection(ORDERS).deleteOne(eq("_id", "o1"));   // the order shipped and archived
        assertThat(Friends.prunerDaysAhead(db).prune()).as("the job waits for its call").isZero();
        lost.release();

        assertThat(call.get(30, TimeUnit.SECONDS)).contains(OperationId.of("ship-o1"));
        assertThat(db.getCollection(ORDERS).countDocuments()).as("not written again").isZero();
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments()).isEqualTo(1);
        assertThat(db.getCollection(Friends.COUNTERS).find().first().getLong("n")).isEqualTo(1L);
    }

    @Test
    void shouldLetThePrunerRemoveTheJobOnceItsCallReleasedIt(MongoDatabase db) {
        Friends.seedCounters(db, 1);
        JobQueue queue = Friends.queue(db).build();
        queue.insertWith(db.getCollection(ORDERS), new Document("_id", "o1"), ship("o1"));
        queue.processNext();
        db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).updateMany(new Document(), Updates.unset(
                dev.consistencykit.core.spi.RecordReleases.FIELD));   // as if its relayer had released it
        assertThat(Friends.prunerDaysAhead(db).prune()).as("held by its call until the call's instance releases it")
                .isZero();

        queue.recover(Duration.ZERO);   // its maintenance releases what its calls wrote

        assertThat(Friends.prunerDaysAhead(db).prune()).isEqualTo(1);
    }

    @Test
    void shouldTellAPausedCallWhoseReservationARelayReleasedThatNothingWasWritten(MongoDatabase db) throws Exception {
        Friends.seedCounters(db, 1);
        db.getCollection(ORDERS).insertOne(new Document("_id", "o1"));
        // write #1 reserves the job id on the order; the caller pauses before #2, the write itself
        FaultInjector paused = FaultInjector.atWrite("updateOne", ORDERS, 2, FaultMode.PAUSE);
        CompletableFuture<Optional<OperationId>> call = CompletableFuture.supplyAsync(() -> Friends.queue(
                paused.wrap(db)).build().upsertWith(paused.wrap(db).getCollection(ORDERS), "o1", null,
                Updates.inc("revision", 1), ship("o1")));
        assertThat(paused.awaitPaused(Duration.ofSeconds(10))).isTrue();

        JobQueue relay = Friends.queue(db).build();
        relay.relayOutbox(db.getCollection(ORDERS));
        assertThat(db.getCollection(ORDERS).find().first()).as("seen once: kept").containsKey("jobOutboxReserved");
        relay.relayOutbox(db.getCollection(ORDERS), Duration.ZERO);
        assertThat(db.getCollection(ORDERS).find().first()).isEqualTo(new Document("_id", "o1"));
        paused.release();

        assertThatThrownBy(() -> call.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(
                dev.consistencykit.core.LeaseLostException.class);
        assertThat(db.getCollection(ORDERS).find().first()).as("nothing written").isEqualTo(new Document("_id", "o1"));
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments()).isZero();
    }

    @Test
    void shouldTypeAViolationOfTheApplicationsOwnUniqueIndexAndWriteNothing(MongoDatabase db) {
        Friends.seedCounters(db, 1);
        JobQueue queue = Friends.queue(db).build();
        MongoCollection<Document> orders = db.getCollection(ORDERS);
        orders.createIndex(new Document("ref", 1), new com.mongodb.client.model.IndexOptions().unique(true));
        queue.insertWith(orders, new Document("_id", "o1").append("ref", "R-1"), ship("o1"));

        assertThatThrownBy(() -> queue.insertWith(orders, new Document("_id", "o2").append("ref", "R-1"), ship("o2")))
                .isInstanceOf(dev.consistencykit.core.ServerRefusedException.class);
        assertThatThrownBy(() -> queue.upsertWith(orders, "o3", eq("ref", "R-1"), Updates.set("n", 1), ship("o3")))
                .isInstanceOf(dev.consistencykit.core.ServerRefusedException.class);
        assertThatThrownBy(() -> queue.upsertWith(orders, "o4", eq("_id", "o5"), Updates.set("n", 1), ship("o4")))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("_id");

        assertThat(orders.countDocuments()).isEqualTo(1);
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments()).as("o1's job only")
                .isEqualTo(1);
    }
}
