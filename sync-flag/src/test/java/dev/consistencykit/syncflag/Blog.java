package dev.consistencykit.syncflag;

import static com.mongodb.client.model.Filters.eq;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.RetryPolicy;

/** The blog workload: users (masters) whose names are copied into comments and into the comments array of posts. */
final class Blog {

    static final String USERS = "users";
    static final String COMMENTS = "comments";
    static final String POSTS = "posts";
    static final RetryPolicy FAST_RETRY = RetryPolicy.DEFAULT.withBackoff(Duration.ofMillis(1), Duration.ofMillis(4));

    private Blog() {
    }

    static SyncTarget commentsTarget() {
        return SyncTarget.in(COMMENTS, "authorId").copy("name", "authorName");
    }

    static SyncTarget postsTarget() {
        return SyncTarget.in(POSTS, "authorId").inArray("comments").copy("name", "authorName");
    }

    /** Users' names copied into comments and into posts' comments, with fast retries. */
    static SyncFlag.Builder sync(MongoDatabase db) {
        return SyncFlag.builder(db).master(USERS, "name").target(commentsTarget()).target(postsTarget())
                .retryPolicy(FAST_RETRY);
    }

    /**
     * Users u0…u(n-1) named "User i"; each with {@code commentsPerUser} comments; and n posts, post j holding comments
     * of users j and j+1 (and j again), all copies in step.
     */
    static void seed(MongoDatabase db, int users, int commentsPerUser) {
        List<Document> masters = new ArrayList<>();
        List<Document> comments = new ArrayList<>();
        List<Document> posts = new ArrayList<>();
        for (int i = 0; i < users; i++) {
            masters.add(new Document("_id", "u" + i).append("name", "User " + i).append("email", "u" + i + "@x"));
            for (int c = 0; c < commentsPerUser; c++) {
                comments.add(new Document("_id", "c" + i + "-" + c).append("authorId", "u" + i)
                        .append("authorName", "User " + i).append("text", "comment " + c));
            }
            int next = (i + 1) % users;
            posts.add(new Document("_id", "p" + i).append("title", "post " + i).append("comments", List.of(
                    new Document("authorId", "u" + i).append("authorName", "User " + i).append("text", "first"),
                    new Document("authorId", "u" + next).append("authorName", "User " + next).append("text", "reply"),
                    new Document("authorId", "u" + i).append("authorName", "User " + i).append("text", "again"))));
        }
        db.getCollection(USERS).insertMany(masters);
        db.getCollection(COMMENTS).insertMany(comments);
        db.getCollection(POSTS).insertMany(posts);
    }

    /** Every copy equals its master's name, and no master is flagged. */
    static List<String> invariants(MongoDatabase db) {
        List<String> problems = new ArrayList<>(copiesMatch(db));
        for (Document user : db.getCollection(USERS).find(com.mongodb.client.model.Filters.exists("syncing"))) {
            problems.add("master " + user.get("_id") + " still flagged: " + user.get("syncing"));
        }
        return problems;
    }

    /** Every copy, top-level or in an array, equals its master's current name. */
    static List<String> copiesMatch(MongoDatabase db) {
        List<String> problems = new ArrayList<>();
        Map<Object, Object> names = new HashMap<>();
        for (Document user : db.getCollection(USERS).find()) {
            names.put(user.get("_id"), user.get("name"));
        }
        for (Document comment : db.getCollection(COMMENTS).find()) {
            Object expected = names.get(comment.get("authorId"));
            if (!Objects.equals(expected, comment.get("authorName"))) {
                problems.add("comment " + comment.get("_id") + " says " + comment.get("authorName") + ", master "
                        + comment.get("authorId") + " is " + expected);
            }
        }
        for (Document post : db.getCollection(POSTS).find()) {
            for (Document c : post.getList("comments", Document.class)) {
                Object expected = names.get(c.get("authorId"));
                if (!Objects.equals(expected, c.get("authorName"))) {
                    problems.add("post " + post.get("_id") + " comment by " + c.get("authorId") + " says "
                            + c.get("authorName") + ", master is " + expected);
                }
            }
        }
        return problems;
    }

    static String nameOf(MongoDatabase db, String user) {
        return db.getCollection(USERS).find(eq("_id", user)).first().getString("name");
    }
}
