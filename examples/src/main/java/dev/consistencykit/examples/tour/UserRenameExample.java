package dev.consistencykit.examples.tour;

import java.time.Duration;
import java.util.List;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.InjectedCrash;

/** Sync flag: a user renames herself; her name is copied into her comments and into the comments inside posts. */
public final class UserRenameExample implements TourExample {

    @Override
    public String pattern() {
        return "sync-flag";
    }

    @Override
    public String title() {
        return "Sync flag: a user rename propagated to her comments and posts";
    }

    /** The sync flag over users, with copies of the name in comments and in posts' comment arrays. */
    static SyncFlag sync(MongoDatabase db) {
        return SyncFlag.builder(db).master("users", "name")
                .target(SyncTarget.in("comments", "authorId").copy("name", "authorName"))
                .target(SyncTarget.in("posts", "authorId").inArray("comments").copy("name", "authorName"))
                .build();
    }

    @Override
    public void run(MongoDatabase db, Narration n) {
        n.step("setup: user ann, two comments by her, a post with her comment in its comments array");
        db.getCollection("users").insertOne(new Document("_id", "ann").append("name", "Ann"));
        db.getCollection("comments").insertMany(List.of(
                new Document("_id", "c1").append("authorId", "ann").append("authorName", "Ann"),
                new Document("_id", "c2").append("authorId", "ann").append("authorName", "Ann")));
        db.getCollection("posts").insertOne(new Document("_id", "p1").append("comments", List.of(
                new Document("authorId", "ann").append("authorName", "Ann"))));
        sync(db).ensureIndexes();

        n.step("Ann renames herself \"Ann Smith\": the master with a flag, each copy target, then the flag cleared");
        sync(db).update("ann", Updates.set("name", "Ann Smith"));
        n.reader(view(db));
        n.check(consistent(db, "Ann Smith"), "every copy to read \"Ann Smith\" and no flag");

        n.step("she renames herself again; the process dies right after the comments were written (crash after write #2)");
        try {
            sync(FaultInjector.at(2, FaultMode.CRASH_AFTER).wrap(db)).update("ann", Updates.set("name", "Ann S."));
            n.problem("the crash was not injected");
        } catch (InjectedCrash crash) {
            n.crashed(crash.getMessage());
        }
        n.reader(view(db));
        n.check(!consistent(db, "Ann S."), "the post's copy to still show the old name before recovery");

        n.step("a fresh process runs the sweeper: it finds the flag (an indexed query) and finishes the rename (the master"
                + " already holds the new name, so the copies go forward to it)");
        sync(db).recover(Duration.ZERO);
        n.reader(view(db));
        n.check(consistent(db, "Ann S."), "every copy to read \"Ann S.\" and no flag after recovery");
    }

    private static String view(MongoDatabase db) {
        Document ann = db.getCollection("users").find(Filters.eq("_id", "ann")).first();
        Document comment = db.getCollection("comments").find(Filters.eq("_id", "c2")).first();
        Document post = db.getCollection("posts").find(Filters.eq("_id", "p1")).first();
        String inPost = post.getList("comments", Document.class).get(0).getString("authorName");
        return "user \"" + ann.getString("name") + "\"" + (ann.containsKey("syncing") ? " (flagged)" : "")
                + ", comment by \"" + comment.getString("authorName") + "\", comment in post by \"" + inPost + "\"";
    }

    private static boolean consistent(MongoDatabase db, String name) {
        Document ann = db.getCollection("users").find(Filters.eq("_id", "ann")).first();
        boolean comments = db.getCollection("comments").countDocuments(Filters.ne("authorName", name)) == 0;
        boolean posts = db.getCollection("posts").countDocuments(Filters.elemMatch("comments",
                Filters.and(Filters.eq("authorId", "ann"), Filters.ne("authorName", name)))) == 0;
        return name.equals(ann.getString("name")) && !ann.containsKey("syncing") && comments && posts;
    }
}
