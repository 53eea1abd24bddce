package dev.consistencykit.examples.samples;

import java.util.List;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.syncflag.MasterUpdate;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.syncflag.SyncVerification;

/** The README's sync-flag sample. */
public final class SyncFlagSample {

    private SyncFlagSample() {
    }

    /** Data the sample refers to: a user, a comment and a post with an embedded comment by that user. */
    public static void seed(MongoDatabase db) {
        db.getCollection("users").insertOne(new Document("_id", "ann").append("name", "Ann"));
        db.getCollection("comments").insertOne(new Document("_id", "c1").append("authorId", "ann")
                .append("authorName", "Ann"));
        db.getCollection("posts").insertOne(new Document("_id", "p1").append("comments",
                List.of(new Document("authorId", "ann").append("authorName", "Ann"))));
    }

    /** Runs the sample on {@code db}. */
    public static void run(MongoDatabase db) {
        // README:start
        SyncFlag sync = SyncFlag.builder(db)
                .master("users", "name")                                                        // fields that have copies
                .target(SyncTarget.in("comments", "authorId").copy("name", "authorName"))
                .target(SyncTarget.in("posts", "authorId").inArray("comments").copy("name", "authorName"))
                .build();
        sync.ensureIndexes();                                 // sparse flag index; an index on each target's id field
        sync.update("ann", Updates.set("name", "Ann Smith")); // master + flag in one write, one write per target, clear
        sync.apply(MasterUpdate.of("ann", Updates.set("name", "Ann S.")).withId(OperationId.of("req-7")));  // idempotent
        sync.recover();                                       // periodically: repair flags older than staleAfter (60 s)
        Document ann = db.getCollection("users").find(Filters.eq("_id", "ann")).first();
        if (ann.containsKey("syncing")) sync.readRepair(ann);  // a reader who sees the flag can propagate now
        SyncVerification check = sync.verify(true);           // adopting existing data: find and repair stale copies
        // README:end
        Samples.check(check.staleMasters() == 0, "no master left flagged: " + check);
        Samples.check("Ann S.".equals(db.getCollection("comments").find().first().getString("authorName")),
                "the comment carries the new name");
    }
}
