package dev.consistencykit.examples.tour;

import java.time.Duration;
import java.util.List;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.InjectedCrash;

/** Job queue: "A and B become friends", one job whose two effects are each applied once, however often it runs. */
public final class FriendshipExample implements TourExample {

    @Override
    public String pattern() {
        return "job-queue";
    }

    @Override
    public String title() {
        return "Job queue: \"A and B become friends\"";
    }

    /** The queue, with the handler that adds each user to the other's friends, once each. */
    static JobQueue queue(MongoDatabase db) {
        return JobQueue.builder(db).handler("befriend", ctx -> {
            Document p = ctx.payload();
            ctx.applyOnce("users", p.get("a"), Updates.push("friends", p.get("b")));
            ctx.applyOnce("users", p.get("b"), Updates.push("friends", p.get("a")));
        }).build();
    }

    @Override
    public void run(MongoDatabase db, Narration n) {
        n.step("setup: users ann, bob and cid with no friends");
        db.getCollection("users").insertMany(List.of(new Document("_id", "ann").append("friends", List.of()),
                new Document("_id", "bob").append("friends", List.of()),
                new Document("_id", "cid").append("friends", List.of())));
        queue(db).ensureIndexes();

        n.step("enqueue \"ann and bob become friends\" (one upsert), then a worker claims and runs it");
        queue(db).enqueue(JobRequest.of("befriend", new Document("a", "ann").append("b", "bob")));
        queue(db).processNext();
        n.reader(view(db));
        n.check(friends(db, "ann").equals(List.of("bob")) && friends(db, "bob").equals(List.of("ann")),
                "ann and bob to be friends both ways");

        n.step("enqueue \"ann and cid become friends\"; the worker dies right after adding cid to ann's friends");
        queue(db).enqueue(JobRequest.of("befriend", new Document("a", "ann").append("b", "cid")));
        try {
            queue(FaultInjector.at(4, FaultMode.CRASH_AFTER).wrap(db)).processNext();
            n.problem("the crash was not injected");
        } catch (InjectedCrash crash) {
            n.crashed(crash.getMessage());
        }
        n.reader(view(db));
        n.check(friends(db, "ann").contains("cid") && !friends(db, "cid").contains("ann"),
                "a half-applied job before recovery (ann lists cid, cid does not list ann yet)");

        n.step("a fresh process requeues the job and runs it again (a job once enqueued must happen, so recovery only goes"
                + " forward); ann's side is not applied twice");
        queue(db).recover(Duration.ZERO);
        n.reader(view(db));
        n.check(friends(db, "ann").equals(List.of("bob", "cid")) && friends(db, "cid").equals(List.of("ann")),
                "ann to list bob and cid once each, and cid to list ann, after recovery");
    }

    private static List<String> friends(MongoDatabase db, String user) {
        return db.getCollection("users").find(Filters.eq("_id", user)).first().getList("friends", String.class);
    }

    private static String view(MongoDatabase db) {
        return "ann's friends " + friends(db, "ann") + ", bob's " + friends(db, "bob") + ", cid's "
                + friends(db, "cid");
    }
}
