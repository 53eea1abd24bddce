package dev.consistencykit.cli.lab;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

import org.bson.Document;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.syncflag.MasterUpdate;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncFlagConfig;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.testkit.ChaosRunner;
import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.InterleavingExplorer;
import dev.consistencykit.testkit.MongoTarget;

/** Chaos and benchmark of the sync flag: user renames copied into comments and into posts' comment arrays. */
public final class SyncFlagLab implements PatternLab {

    private static final String USERS = "users";
    private static final String COMMENTS = "comments";
    private static final String POSTS = "posts";

    @Override
    public String pattern() {
        return "sync-flag";
    }

    static SyncFlag sync(MongoDatabase db) {
        return SyncFlag.builder(db).master(USERS, "name").retryPolicy(FAST_RETRY)
                .target(SyncTarget.in(COMMENTS, "authorId").copy("name", "authorName"))
                .target(SyncTarget.in(POSTS, "authorId").inArray("comments").copy("name", "authorName"))
                .build();
    }

    /** {@code users} users with {@code copies} comments each, and one post per user with comments by two users. */
    static void seed(MongoDatabase db, int users, int copies) {
        List<Document> masters = new ArrayList<>();
        List<Document> comments = new ArrayList<>();
        List<Document> posts = new ArrayList<>();
        for (int u = 0; u < users; u++) {
            String name = "User " + u;
            masters.add(new Document("_id", "u" + u).append("name", name));
            for (int c = 0; c < copies; c++) {
                comments.add(new Document("_id", "c" + u + "-" + c).append("authorId", "u" + u)
                        .append("authorName", name));
            }
            String other = "u" + ((u + 1) % users);
            posts.add(new Document("_id", "p" + u).append("comments", List.of(
                    new Document("authorId", "u" + u).append("authorName", name),
                    new Document("authorId", other).append("authorName", "User " + ((u + 1) % users)))));
        }
        db.getCollection(USERS).insertMany(masters);
        db.getCollection(COMMENTS).insertMany(comments);
        db.getCollection(POSTS).insertMany(posts);
    }

    /** Every copy equals its master's name, and no master is still flagged. */
    public static List<String> invariants(MongoDatabase db) {
        List<String> problems = new ArrayList<>();
        Map<Object, Object> names = new HashMap<>();
        for (Document user : db.getCollection(USERS).find()) {
            names.put(user.get("_id"), user.get("name"));
            if (user.containsKey(SyncFlagConfig.FLAG_FIELD)) {
                problems.add("master " + user.get("_id") + " still flagged");
            }
        }
        List<Document> copies = new ArrayList<>();
        db.getCollection(COMMENTS).find().into(copies);
        for (Document post : db.getCollection(POSTS).find()) {
            copies.addAll(post.getList("comments", Document.class));
        }
        for (Document copy : copies) {
            if (!Objects.equals(names.get(copy.get("authorId")), copy.get("authorName"))) {
                problems.add("a copy of " + copy.get("authorId") + " says " + copy.get("authorName") + ", the master "
                        + names.get(copy.get("authorId")));
            }
        }
        return problems;
    }

    @Override
    public ChaosReport chaos(MongoTarget target, int seeds, Consumer<String> progress) {
        MongoClient client = target.client();
        List<String> details = new ArrayList<>();
        CrashPointExplorer.ExplorationReport rename = CrashPointExplorer.builder(client)
                .name("rename")
                .workload(workload().operation(db -> sync(db).apply(new MasterUpdate(OperationId.of("op-1"), "u0",
                        Updates.set("name", "Ann Smith")))))
                .recoveryFaults(true)
                .build().explore();
        rename.violations().forEach(v -> details.add("rename: " + v));
        progress.accept("explored a rename to two targets: " + rename.writeSites() + " write sites, "
                + rename.scenarios() + " scenarios, " + rename.violations().size() + " violations");
        ChaosRunner runner = ChaosRunner.builder(client)
                .name("renames")
                .workers(6).operationsPerWorker(4).faultRate(0.08).maxPause(Duration.ofMillis(15)).recoverers(2)
                .workload(workload())
                .build();
        int interleavings = PatternLab.explore(List.of(
                interleaving(target, "rename", db -> sync(db).update("u0", Updates.set("name", "Ann"))),
                interleaving(target, "rename-by-id", db -> sync(db).apply(new MasterUpdate(OperationId.of("op-1"),
                        "u0", Updates.set("name", "Ann")))),
                interleaving(target, "rename-neighbour", db -> sync(db).update("u1", Updates.set("name", "Ann"))),
                interleaving(target, "rename-twice", db -> {
                    sync(db).update("u0", Updates.set("name", "Ann"));
                    sync(db).update("u0", Updates.set("name", "Bee"));
                })),
                details, progress);
        ChaosRunner.Summary summary = PatternLab.runSeeds(runner, seeds, progress);
        summary.failures().forEach(r -> details.add("chaos " + r));
        return new ChaosReport(pattern(), rename.writeSites(), rename.scenarios(), interleavings, seeds,
                summary.operations(),
                summary.crashes(), summary.faults(), details.size(), details.subList(0, Math.min(details.size(), 20)));
    }

    /**
     * The sync flag as every exploration of this lab runs it: three users with their posts and comments; one
     * operation a rename of a random user under an id of its own; the sweeper; every copy equal to its master.
     */
    private static LabWorkload workload() {
        return new LabWorkload(db -> seed(db, 3, 2), (db, random) -> {
            String op = "op-" + Long.toHexString(random.nextLong());
            sync(db).apply(new MasterUpdate(OperationId.of(op), "u" + random.nextInt(3),
                    Updates.set("name", "Name " + op)));
        }, db -> sync(db).recover(Duration.ZERO), SyncFlagLab::invariants);
    }

    /**
     * {@code operation} paused at each of its driver calls while a sweeper, a second owner renaming the same masters,
     * a read repair, a verifier or a reader of the copies (which may lag, but never shows a name never held) runs.
     */
    private static InterleavingExplorer interleaving(MongoTarget target, String name,
                                                     Consumer<MongoDatabase> operation) {
        java.util.Set<Object> names = java.util.Set.of("User 0", "User 1", "Ann", "Bee");
        return InterleavingExplorer.builder(target)
                .name(name)
                .workload(workload().operation(operation))
                .actor("sweeper", db -> {
                    sync(db).recover(Duration.ZERO);
                    return List.of();
                })
                .actor("second owner", db -> {
                    sync(db).update("u0", Updates.set("name", "Bee"));
                    return List.of();
                })
                .actor("second master", db -> {
                    sync(db).update("u1", Updates.set("name", "Bee"));
                    return List.of();
                })
                .actor("read repair", db -> {
                    sync(db).readRepair(db.getCollection(USERS).find(Filters.eq("_id", "u0")).first());
                    return List.of();
                })
                .actor("verifier", db -> {
                    sync(db).verify(false);
                    return List.of();
                })
                .actor("copy reader", db -> {
                    List<String> problems = new ArrayList<>();
                    for (Document c : db.getCollection(COMMENTS).find()) {
                        if (!names.contains(c.get("authorName")) && !String.valueOf(c.get("authorName"))
                                .startsWith("User ")) {
                            problems.add("comment " + c.get("_id") + " shows " + c.get("authorName"));
                        }
                    }
                    return problems;
                })
                .build();
    }

    /** Masters in the benchmark: each rename is propagated to its {@value #BENCH_COPIES} comments. */
    private static final int BENCH_MASTERS = 100;
    private static final int BENCH_COPIES = 10;

    @Override
    public BenchReport bench(MongoTarget target, Bench.Settings settings, Consumer<String> progress) {
        MongoDatabase db = Bench.database(target, "benchsync", settings, Map.of(USERS, "_id", COMMENTS, "authorId"));
        try {
            List<String> users = new ArrayList<>();
            List<Document> masters = new ArrayList<>();
            List<Document> comments = new ArrayList<>();
            for (int u = 0; u < BENCH_MASTERS; u++) {
                users.add("u" + u);
                masters.add(new Document("_id", "u" + u).append("name", "User " + u));
                for (int c = 0; c < BENCH_COPIES; c++) {
                    comments.add(new Document("_id", "c" + u + "-" + c).append("authorId", "u" + u)
                            .append("authorName", "User " + u));
                }
            }
            db.getCollection(USERS).insertMany(masters);
            db.getCollection(COMMENTS).insertMany(comments);
            SyncFlag sync = SyncFlag.builder(db).master(USERS, "name")
                    .target(SyncTarget.in(COMMENTS, "authorId").copy("name", "authorName")).build();
            sync.ensureIndexes();
            AtomicLong renames = new AtomicLong();
            // The operation measured is the rename of a master updated before. A master's first update also reads
            // its target's newest copy (its version must start above copies an earlier master of the same id left),
            // once: every master has it here, however many renames the timed warm-up makes on this machine
            progress.accept("making the first update of " + BENCH_MASTERS + " masters");
            for (String user : users) {
                sync.update(user, Updates.set("name", "Name " + renames.incrementAndGet()));
            }
            IntConsumer rename = t -> sync.update(users.get(ThreadLocalRandom.current().nextInt(users.size())),
                    Updates.set("name", "Name " + renames.incrementAndGet()));
            IntConsumer raw = Bench.rawUpdate(db.getCollection(USERS), users);
            Bench.Measured m = Bench.measure(target, db.getName(), settings, rename, raw, progress, "renames");
            long stale = db.getCollection(USERS).countDocuments(Filters.exists(SyncFlagConfig.FLAG_FIELD));
            return new BenchReport(pattern(), settings.threads(), m.pattern().operations(), m.roundTripsPerOp(),
                    m.writesPerOp(), m.pattern().perSecond(), m.raw().perSecond(),
                    new Document("operation", "update(): rename a master, propagate to its " + BENCH_COPIES
                            + " copies in one target, clear the flag")
                            .append("masters", BENCH_MASTERS).append("copiesPerMaster", BENCH_COPIES)
                            .append("flagsLeft", stale)
                            .append("rawBaseline", Bench.RAW_BASELINE));
        } finally {
            Bench.release(db, settings);
        }
    }
}
