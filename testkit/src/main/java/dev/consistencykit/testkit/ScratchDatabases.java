package dev.consistencykit.testkit;

import java.util.ArrayDeque;
import java.util.Deque;
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
 * make; every document is gone. A database whose emptying fails is dropped instead.
 *
 * <p>Used by one exploration at a time: {@link #take()} and {@link #give(MongoDatabase)} around each scenario, then
 * {@link #close()} drops what is left.
 */
final class ScratchDatabases implements AutoCloseable {

    private final MongoClient client;
    private final String hint;
    private final Deque<MongoDatabase> idle = new ArrayDeque<>();

    ScratchDatabases(MongoClient client, String hint) {
        this.client = Objects.requireNonNull(client, "client");
        this.hint = Objects.requireNonNull(hint, "hint");
    }

    /** An empty database: one emptied after an earlier scenario, or a new one. */
    synchronized MongoDatabase take() {
        MongoDatabase db = idle.poll();
        return db != null ? db : client.getDatabase(MongoTarget.freshDatabaseName(hint));
    }

    /** Empties {@code db} (every document of every collection; collections and indexes stay) for the next scenario. */
    void give(MongoDatabase db) {
        try {
            for (String name : db.listCollectionNames()) {
                if (!name.startsWith("system.")) {
                    db.getCollection(name).deleteMany(new Document());
                }
            }
        } catch (MongoException e) {
            db.drop();
            return;
        }
        synchronized (this) {
            idle.push(db);
        }
    }

    /** Drops every idle database. */
    @Override
    public synchronized void close() {
        while (!idle.isEmpty()) {
            idle.poll().drop();
        }
    }
}
