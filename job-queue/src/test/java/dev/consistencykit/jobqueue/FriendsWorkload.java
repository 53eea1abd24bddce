package dev.consistencykit.jobqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import java.util.function.Function;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.Workload;

/**
 * The job queue described once for every runner of the testkit: users (and counters) seeded, one operation as a
 * process makes it on a queue of its own (by default a job enqueued, a befriending or a count, then one job run), the
 * relay of outboxes and recovery as a fresh process runs them, and the friends' invariants (every effect applied once,
 * every job done or dead, nothing left on a document) read back. A test varies what is seeded, the operation, its
 * recovery or its invariants.
 */
final class FriendsWorkload implements Workload {

    /** One operation of one process, on the database it is given and a queue built as this workload builds it. */
    @FunctionalInterface
    interface Operation {
        void run(MongoDatabase database, JobQueue queue, Random random);
    }

    private final Consumer<MongoDatabase> seeding;
    private final Integer maxAttempts;
    private final Operation operation;
    private final Consumer<MongoDatabase> recovery;
    private final Function<MongoDatabase, List<String>> invariants;

    private FriendsWorkload(Consumer<MongoDatabase> seeding, Integer maxAttempts, Operation operation,
                            Consumer<MongoDatabase> recovery, Function<MongoDatabase, List<String>> invariants) {
        this.seeding = seeding;
        this.maxAttempts = maxAttempts;
        this.operation = operation;
        this.recovery = recovery;
        this.invariants = invariants;
    }

    /**
     * Random jobs on users {@code u0…u3} and counters {@code c0…c4}: a count or a befriending of two users, enqueued,
     * then one job run; each job may try 50 times, so that faults do not kill it.
     */
    static FriendsWorkload jobs() {
        return new FriendsWorkload(db -> {
            Friends.seedCounters(db, 5);
            Friends.seedUsers(db, "u0", "u1", "u2", "u3");
        }, 50, (db, queue, random) -> {
            String id = "j-" + Long.toHexString(random.nextLong());
            if (random.nextBoolean()) {
                queue.enqueue(JobRequest.of("count", new Document("counter", "c" + random.nextInt(5)))
                        .withId(OperationId.of(id)).withMaxAttempts(50));
            } else {
                int a = random.nextInt(4);
                int b = (a + 1 + random.nextInt(3)) % 4;
                queue.enqueue(Friends.befriend("u" + a, "u" + b).withId(OperationId.of(id)).withMaxAttempts(50));
            }
            queue.processNext();
        }, null, null);
    }

    /**
     * Users {@code names}, on a queue with the default settings, and an operation the test gives
     * ({@link #operation}).
     */
    static FriendsWorkload on(String... names) {
        return new FriendsWorkload(db -> Friends.seedUsers(db, names), null, (db, queue, random) -> {
            throw new IllegalStateException("no operation: give one with operation(...)");
        }, null, null);
    }

    /** The same queue, on a database seeded by {@code value} instead. */
    FriendsWorkload seededBy(Consumer<MongoDatabase> value) {
        return new FriendsWorkload(value, maxAttempts, operation, recovery, invariants);
    }

    /** The same queue with {@code value} as the one operation. */
    FriendsWorkload operation(Operation value) {
        return new FriendsWorkload(seeding, maxAttempts, value, recovery, invariants);
    }

    /** The same queue, recovered by {@code value} instead of relay and recovery. */
    FriendsWorkload recoveredBy(Consumer<MongoDatabase> value) {
        return new FriendsWorkload(seeding, maxAttempts, operation, value, invariants);
    }

    /** The same queue, checked by {@code value} instead of the friends' invariants. */
    FriendsWorkload checkedBy(Function<MongoDatabase, List<String>> value) {
        return new FriendsWorkload(seeding, maxAttempts, operation, recovery, value);
    }

    /** The same queue, checked by the friends' invariants and {@code value}. */
    FriendsWorkload alsoChecking(Function<MongoDatabase, List<String>> value) {
        return checkedBy(db -> {
            List<String> problems = new ArrayList<>(Friends.invariants(db));
            problems.addAll(value.apply(db));
            return problems;
        });
    }

    /** A queue as one process builds it, on {@code db}. */
    JobQueue queue(MongoDatabase db) {
        JobQueue.Builder builder = Friends.queue(db);
        return (maxAttempts == null ? builder : builder.maxAttempts(maxAttempts)).build();
    }

    @Override
    public void seed(MongoDatabase database) {
        seeding.accept(database);
    }

    @Override
    public void operate(MongoDatabase database, Random random) {
        operation.run(database, queue(database), random);
    }

    /** Relays what outboxes hold, then recovers: what a restarted process's maintenance does. */
    @Override
    public void recover(MongoDatabase database) {
        if (recovery != null) {
            recovery.accept(database);
            return;
        }
        JobQueue queue = queue(database);
        queue.relayOutbox(database.getCollection(Friends.USERS), Duration.ZERO);
        queue.recover(Duration.ZERO);
    }

    @Override
    public List<String> invariants(MongoDatabase database) {
        return invariants != null ? invariants.apply(database) : Friends.invariants(database);
    }

    @Override
    public String toString() {
        return "jobs";
    }
}
