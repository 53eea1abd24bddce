package dev.consistencykit.testkit;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Sorts;

/**
 * Every document of every collection of a database, read back from the server, so that a test can assert that
 * a rejected request left the database unchanged.
 *
 * @param collections documents per collection name, each list sorted by {@code _id}
 */
public record DatabaseSnapshot(Map<String, List<Document>> collections) {

    /** Copies the map. */
    public DatabaseSnapshot {
        collections = Map.copyOf(collections);
    }

    /** Reads every non-system collection of {@code database}. */
    public static DatabaseSnapshot of(MongoDatabase database) {
        Map<String, List<Document>> collections = new TreeMap<>();
        for (String name : database.listCollectionNames()) {
            if (name.startsWith("system.")) {
                continue;
            }
            List<Document> documents = database.getCollection(name).find().sort(Sorts.ascending("_id"))
                    .into(new ArrayList<>());
            collections.put(name, documents);
        }
        return new DatabaseSnapshot(collections);
    }

    /** The number of documents in all collections. */
    public int documentCount() {
        return collections.values().stream().mapToInt(List::size).sum();
    }
}
