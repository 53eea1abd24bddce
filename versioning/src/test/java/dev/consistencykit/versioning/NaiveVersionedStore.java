package dev.consistencykit.versioning;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.lte;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.bson.Document;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;

/**
 * The naive scheme the issue warns about, kept only to prove the abandoned-writer test can tell it apart: item
 * versions written at root+1 under a unique {@code {root, item, version}} index, committed by a compare-and-set of the
 * root from base to base+1; readers take each item's newest version at or below the root's.
 */
final class NaiveVersionedStore {

    private final MongoCollection<Document> roots;
    private final MongoCollection<Document> items;

    NaiveVersionedStore(MongoDatabase db) {
        this.roots = db.getCollection("naiveRoots");
        this.items = db.getCollection("naiveItems");
        items.createIndex(Indexes.ascending("root", "item", "version"), new IndexOptions().unique(true));
    }

    void createRoot(String root) {
        roots.insertOne(new Document("_id", root).append("version", 0L));
    }

    /** Writes the items at {@code base + 1}; with {@code commit}, then moves the root. False if the move failed. */
    boolean write(String root, long base, Map<String, Document> changes, boolean commit) {
        List<Document> docs = new ArrayList<>();
        changes.forEach((item, value) -> docs.add(new Document("root", root).append("item", item)
                .append("version", base + 1).append("value", value)));
        items.insertMany(docs);
        return commit && roots.updateOne(and(eq("_id", root), eq("version", base)), Updates.set("version", base + 1))
                .getModifiedCount() == 1;
    }

    Map<Object, Document> read(String root) {
        long version = roots.find(eq("_id", root)).first().getLong("version");
        Map<Object, Document> tree = new HashMap<>();
        for (Document d : items.find(and(eq("root", root), lte("version", version))).sort(Sorts.ascending("version"))) {
            tree.put(d.get("item"), d.get("value", Document.class));
        }
        return tree;
    }
}
