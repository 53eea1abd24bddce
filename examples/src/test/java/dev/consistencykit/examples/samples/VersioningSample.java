package dev.consistencykit.examples.samples;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.Retention;
import dev.consistencykit.versioning.VersionDiff;
import dev.consistencykit.versioning.VersionedStore;
import dev.consistencykit.versioning.VersionedTree;

/** The README's versioned-documents sample. */
public final class VersioningSample {

    private VersioningSample() {
    }

    /** Nothing to seed: the sample creates its root. */
    public static void seed(MongoDatabase db) {
    }

    /** Runs the sample on {@code db}. */
    public static void run(MongoDatabase db) {
        // README:start
        VersionedStore store = VersionedStore.builder(db).retention(Retention.keepLast(100)).build();
        store.ensureIndexes();                                  // readers', settlement's and cleanup's (none is unique)
        store.createRoot("catalogue");                          // version 0, no items
        VersionedTree tree = store.read("catalogue");           // 1 round trip: the tree the root carries (or an aggregation)
        store.commit(ChangeSet.on("catalogue", tree.version())  // 3 round trips: stage, write items, compare-and-set root
                .put("shoes", new Document("title", "Shoes").append("price", 4_900))
                .delete("hats").meta(new Document("by", "ann")).build());   // VersionConflictException if the base moved
        store.update("catalogue", (current, change) ->          // read, write items, compare-and-set: no stage needed
                change.put("shoes", new Document(current.item("shoes").orElseThrow()).append("price", 3_900)));
        VersionedTree before = store.readAsOf("catalogue", 1);  // time travel; VersionPrunedException below retention
        VersionDiff diff = store.diff("catalogue", 1, 2);       // also get(root, item), history(root, item), versions(root)
        store.recover();                                        // periodically: decide stale change sets, settle, clean, prune
        // README:end
        Samples.check(before.version() == 1, "version 1 read back: " + before);
        Samples.check(store.read("catalogue").version() == 2, "two versions committed");
        Samples.check(diff != null, "a diff between versions 1 and 2");
    }
}
