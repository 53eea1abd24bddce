package dev.consistencykit.testkit;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

import org.bson.Document;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

/**
 * Fresh databases for the scenarios of one exploration, emptied and handed out again rather than dropped and made
 * anew: on a real engine a database, each collection and each index is a round of catalog work (about 200 ms for a
 * pattern's three collections and five indexes on DocumentDB here, against 25 ms to empty them), paid once per
 * scenario. A scenario of the same exploration sets up the same collections and indexes, so it finds what it would
 * make; every document is gone. A database whose emptying fails is dropped instead, and so is one that served
 * {@link #MAX_USES} scenarios: on the real engine, indexes whose collection was emptied and refilled well over a hundred
 * times came to answer the same scan alternately with and without a stored document (docs/servers.md, "Indexes
 * refilled many times"), which no library can read around; a database used a bounded number of times keeps the
 * speed and never reached that state in the measurements.
 *
 * <p>{@link #take()} and {@link #give(MongoDatabase)} around each scenario (from any thread: scenarios run side by side
 * take a database each), then {@link #close()} drops what is left.
 *
 * <pre>{@code
 * try (ScratchDatabases pool = new ScratchDatabases(client, "ledger")) {
 *     MongoDatabase db = pool.take();
 *     runScenario(db);
 *     pool.give(db);        // a scenario that did not end normally drops its database instead
 * }
 * }</pre>
 */
public final class ScratchDatabases implements AutoCloseable {

    /** How many scenarios one database serves before it is dropped. */
    static final int MAX_USES = 25;

    private final MongoClient client;
    private final String hint;
    private final Deque<MongoDatabase> idle = new ArrayDeque<>();
    /** Scenarios each database handed out has served, by name. */
    private final Map<String, Integer> uses = new HashMap<>();

    /** Databases of {@code client}, named from {@code hint} ({@link MongoTarget#freshDatabaseName}). */
    public ScratchDatabases(MongoClient client, String hint) {
        this.client = Objects.requireNonNull(client, "client");
        this.hint = Objects.requireNonNull(hint, "hint");
    }

    /** An empty database: one emptied after an earlier scenario, or a new one. */
    public synchronized MongoDatabase take() {
        MongoDatabase idleOne = idle.poll();
        // a new one is sharded by the suite's plan where the server can shard; an emptied one stays as it was made
        MongoDatabase db = idleOne != null ? idleOne
                : Sharding.of(client).applyPlan(client.getDatabase(MongoTarget.freshDatabaseName(hint)));
        uses.merge(db.getName(), 1, Integer::sum);
        return db;
    }

    /**
     * Empties {@code db} (every document of every collection; collections and indexes stay) for the next scenario, or
     * drops it once it served {@link #MAX_USES} scenarios.
     */
    public void give(MongoDatabase db) {
        if (servedEnough(db)) {
            MongoTarget.drop(db);
            return;
        }
        try {
            for (String name : db.listCollectionNames()) {
                if (!name.startsWith("system.")) {
                    db.getCollection(name).deleteMany(new Document());
                }
            }
        } catch (MongoException e) {
            forget(db);
            MongoTarget.drop(db);
            return;
        }
        synchronized (this) {
            idle.push(db);
        }
    }

    private synchronized boolean servedEnough(MongoDatabase db) {
        if (uses.getOrDefault(db.getName(), 0) < MAX_USES) {
            return false;
        }
        uses.remove(db.getName());
        return true;
    }

    private synchronized void forget(MongoDatabase db) {
        uses.remove(db.getName());
    }

    /** Drops every idle database. */
    @Override
    public synchronized void close() {
        while (!idle.isEmpty()) {
            MongoTarget.drop(idle.poll());
        }
    }
}
