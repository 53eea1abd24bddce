package dev.consistencykit.examples.samples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.bson.Document;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.spi.ConditionalUpdates;
import dev.consistencykit.core.spi.EffectMarker;
import dev.consistencykit.core.spi.MarkerWrite;
import dev.consistencykit.core.spi.OnceEffects;
import dev.consistencykit.core.spi.Transition;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.jobqueue.Schedule;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.logreconciliation.SeqAllocation;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.RoundTripCounter;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TransferVariant;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.VersionedStore;

/**
 * Every round-trip count the README, the docs and the Javadoc state is what the code sends: each statement of the
 * form "N round trips" is registered below with the operation it counts, measured here on the server (commands the
 * driver sends for one operation). A statement not registered fails the test, so a new claim cannot go unchecked; a
 * registered one the code no longer keeps fails it too. Throughput and averages over a run are the bench commands'.
 */
class DocumentedRoundTripsTest {

    /** What a statement counts: an operation measured here, or a figure a command prints ({@code bench}). */
    private record Claim(String file, String phrase, String operation) {
    }

    private static final Pattern STATEMENT = Pattern.compile(
            "\\b(one|two|three|four|five|six|seven|eight|nine|ten|[0-9]+(?:\\.[0-9]+)?)(?: more)? round trips?\\b",
            Pattern.CASE_INSENSITIVE);
    private static final Map<String, Integer> WORDS = Map.of("one", 1, "two", 2, "three", 3, "four", 4, "five", 5,
            "six", 6, "seven", 7, "eight", 8, "nine", 9, "ten", 10);

    /** The figure a bench or compare command prints; re-measured by running it, not here. */
    private static final String PRINTED = "printed by a command";

    private static final List<Claim> CLAIMS = List.of(
            new Claim("README.md", "| 7 round trips, 10 documents | stale", "transfer"),
            new Claim("README.md", "| 7 round trips, 10 documents | same", "transfer at prepare"),
            new Claim("README.md", "| 1 round trip to append", "ledger append"),
            new Claim("README.md", "| 1 round trip to enqueue, 10 for a worker", "enqueue"),
            new Claim("README.md", "| 3 round trips to commit", "versioning commit"),
            new Claim("README.md", "| 1 round trip to enqueue, 9 for a worker", "enqueue"),
            new Claim("docs/patterns/versioning.md", "// 1 round trip: the tree the root carries (or an aggregation)", "versioning read"),
            new Claim("docs/patterns/versioning.md", "// 3 round trips: stage, write items, compare-and-set root", "versioning commit"),
            new Claim("docs/patterns/versioning.md", "of 1,000 roots): 3 round trips per", "versioning commit"),
            new Claim("docs/patterns/sync-flag.md", "10 copies per master): 3 round trips per rename", "rename one target"),
            new Claim("docs/patterns/versioning.md", "settling costs under one round trip", PRINTED),
            new Claim("docs/patterns/two-phase.md", "every such figure): 7 round trips and 10 documents", "transfer"),
            new Claim("docs/patterns/log-reconciliation.md", "later valid changes: 3 round trips", "ledger balance"),
            new Claim("docs/patterns/log-reconciliation.md", "1,000 accounts): 1.0 round trips per transfer", PRINTED),
            new Claim("docs/patterns/two-phase.md", "// 7 round trips; typed", "transfer"),
            new Claim("docs/patterns/two-phase.md", "against 8 round trips for", PRINTED),
            new Claim("README.md", "(3 round trips per effect", "applyOnce"),
            new Claim("docs/patterns/job-queue.md", "(3 round trips per effect", "applyOnce"),
            new Claim("docs/patterns/job-queue.md", "(two round trips more than a plain update", "enqueueWith extra"),
            new Claim("docs/patterns/job-queue.md", "3 round trips per job for the queue's own work", "job own work"),
            new Claim("docs/patterns/job-queue.md", "8 round trips per job; 2026-11-25", PRINTED),
            new Claim("docs/patterns/versioning.md", "`read`, `readAsOf` and `get` take 1 round trip", "versioning read"),
            new Claim("docs/patterns/versioning.md", "3 round trips per commit of a 3-item change set",
                    "versioning commit"),
            new Claim("docs/patterns/log-reconciliation.md", "cheap (1 round trip)", "ledger append"),
            new Claim("docs/patterns/log-reconciliation.md", "1 round trip per append", "ledger append"),
            new Claim("docs/patterns/log-reconciliation.md", "An append is one round trip while it does not collide",
                    "ledger append"),
            new Claim("docs/patterns/log-reconciliation.md", "appends never collide, at one round trip more per account",
                    "counter allocation extra per account"),
            new Claim("docs/patterns/sync-flag.md", "3 round trips per rename with one target", "rename one target"),
            new Claim("docs/patterns/two-phase.md", "7 round trips for a two-account transfer", "transfer"),
            new Claim("docs/peers.md", "why 7 round trips, what the manual's", "transfer"),
            new Claim("core/src/main/java/dev/consistencykit/core/spi/ConditionalUpdates.java",
                    "the common path costs one round trip", "transition"),
            new Claim("core/src/main/java/dev/consistencykit/core/spi/OnceEffects.java",
                    "One round trip when nothing else is in flight on the documents", "settle alone"),
            new Claim("job-queue/src/main/java/dev/consistencykit/jobqueue/JobQueue.java",
                    "Costs two round trips more than a plain update", "enqueueWith extra"),
            new Claim("job-queue/src/main/java/dev/consistencykit/jobqueue/JobContext.java", "Three round trips.",
                    "applyOnce"),
            new Claim("job-queue/src/main/java/dev/consistencykit/jobqueue/internal/JobSchedules.java",
                    "One round trip when nothing is due", "fire nothing due"),
            new Claim("docs/recurring-jobs.md", "fired in 9 round trips", "fire occurrence"),
            new Claim("docs/ordering-keys.md", "is enqueued in 5 round trips", "ordered enqueue"),
            new Claim("docs/concurrency-keys.md", "is enqueued in 5 round trips", "limited enqueue"),
            new Claim("docs/concurrency-keys.md", "enqueued and run in 12 round trips", "limited job own work"),
            new Claim("docs/ordering-keys.md", "enqueued and run in 12 round trips", "ordered job own work"),
            new Claim("docs/ordering-keys.md", "against 3 round trips for", "job own work"),
            new Claim("docs/ordering-keys.md", "against 1 round trip for", "enqueue"),
            new Claim("docs/recurring-jobs.md", "(3 round trips of the queue's own", "job own work"),
            new Claim("docs/recurring-jobs.md", "costs 1 round trip when nothing is due", "fire nothing due"),
            new Claim("log-reconciliation/src/main/java/dev/consistencykit/logreconciliation/Ledger.java",
                    "archiver run: three round trips", "ledger balance"),
            new Claim("log-reconciliation/src/main/java/dev/consistencykit/logreconciliation/Ledger.java",
                    "Three round trips when no transaction left the log", "ledger balances"),
            new Claim("log-reconciliation/src/main/java/dev/consistencykit/logreconciliation/SeqAllocation.java",
                    "one more round trip per account", "counter allocation extra per account"),
            new Claim("log-reconciliation/src/main/java/dev/consistencykit/logreconciliation/internal/"
                    + "ConsistentBalances.java", "Three round trips when nothing moved", "ledger balances"),
            new Claim("two-phase/src/main/java/dev/consistencykit/twophase/TwoPhaseCommit.java",
                    "// 25.00, 7 round trips", "transfer"),
            new Claim("two-phase/src/main/java/dev/consistencykit/twophase/TwoPhaseCommit.java",
                    "An uncontended transfer takes 7 round trips", "transfer"),
            new Claim("two-phase/src/main/java/dev/consistencykit/twophase/TwoPhaseCommit.java",
                    "Two round trips when nothing is in flight", "settled read"),
            new Claim("two-phase/src/main/java/dev/consistencykit/twophase/internal/TransactionParts.java",
                    "An uncontended transfer costs seven round trips", "transfer"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/VersionedStore.java",
                    "compare-and-set the root (three round trips). Committing", "versioning commit"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/VersionedStore.java",
                    "and the root again, in one aggregation (one round trip)", "versioning read"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/VersionedStore.java",
                    "times: three round trips (the read, the item versions, the compare-and-set)",
                    "versioning update"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/VersionedStore.java",
                    "committed version: one round trip.", "versioning read"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/VersionedStore.java",
                    "committed at {@code version}: one round trip for the root's version", "versioning read as of"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/VersionedStore.java",
                    "read by {@code _id} (one round trip)", "versioning read"),
            new Claim("docs/patterns/versioning.md", "is read as below, one round trip later", "versioning uncarried extra"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/package-info.java",
                    "is read as below, one round trip later", "versioning uncarried extra"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/internal/VersionReads.java",
                    "by {@code _id}: one round trip.", "versioning read"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/VersionedStore.java",
                    "if it exists there (one round trip).", "versioning get"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/package-info.java",
                    "commits them: three round trips with", "versioning update"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/package-info.java",
                    "<b>Reading</b> (one round trip, one aggregation)", "versioning read"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/internal/VersionReads.java",
                    "what a direct commit made from it needs: one round trip", "versioning read"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/internal/VersionReads.java",
                    "current version: one round trip ({@link #current})", "versioning read"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/internal/VersionReads.java",
                    "as of {@code version}: one round trip", "versioning read as of"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/VersionedStore.java",
                    "when none was. Read in one round trip.", "versioning read as of a time"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/internal/VersionReads.java",
                    "One round trip: the root, the history record of the newest settled", "versioning read as of a time"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/internal/VersionReads.java",
                    "current version: one round trip (the root, when it carries", "versioning get"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/internal/VersionWrites.java",
                    "Stages, writes and commits {@code p}: three round trips", "versioning commit"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/internal/VersionWrites.java",
                    "compare-and-sets the root (two round trips)", "versioning direct commit"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/internal/VersionWrites.java",
                    "to commit: two round trips", "versioning stage"),
            new Claim("versioning/src/main/java/dev/consistencykit/versioning/internal/VersionStore.java",
                    "One round trip: the root, then its item versions", "versioning read"));

    private static final Map<String, Long> MEASURED = new LinkedHashMap<>();

    private static Path root() {
        return SampleSources.root();
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Commands the driver sends for {@code operation} on a fresh database prepared by {@code setup}. */
    private static long measure(Consumer<MongoDatabase> setup, Consumer<MongoDatabase> operation) {
        MongoTarget target = MongoTarget.fromEnvironment();
        MongoDatabase db = target.client().getDatabase(MongoTarget.freshDatabaseName("rt"));
        try {
            setup.accept(db);
            try (RoundTripCounter counter = RoundTripCounter.attach(target, db.getName())) {
                operation.accept(db);
                return counter.snapshot().commands();
            }
        } finally {
            db.drop();
        }
    }

    private static void accounts(MongoDatabase db) {
        db.getCollection("accounts").insertMany(List.of(new Document("_id", "alice").append("balance", 10_000L),
                new Document("_id", "bob").append("balance", 0L)));
        TwoPhaseCommit.on(db).ensureIndexes();
        // a first transfer warms what an instance learns once (its server clock, its index check)
        TwoPhaseCommit.on(db).transfer(Transfer.of(OperationId.of("warm"), "alice", "bob", 1));
    }

    @BeforeAll
    static void measureEveryOperation() {
        TwoPhaseCommit[] tp = new TwoPhaseCommit[1];
        MEASURED.put("transfer", measure(db -> {
            accounts(db);
            tp[0] = TwoPhaseCommit.on(db);
            tp[0].transfer(Transfer.of(OperationId.of("warm2"), "alice", "bob", 1));
        }, db -> tp[0].transfer(Transfer.of(OperationId.of("t1"), "alice", "bob", 100))));
        MEASURED.put("transfer at prepare", measure(db -> {
            accounts(db);
            tp[0] = TwoPhaseCommit.builder(db).transferVariant(TransferVariant.APPLY_AT_PREPARE).build();
            tp[0].transfer(Transfer.of(OperationId.of("warm2"), "alice", "bob", 1));
        }, db -> tp[0].transfer(Transfer.of(OperationId.of("t1"), "alice", "bob", 100))));
        MEASURED.put("settled read", measure(db -> {
            accounts(db);
            tp[0] = TwoPhaseCommit.on(db);
            tp[0].readSettled("accounts", List.of("alice", "bob"), Duration.ofSeconds(5));
        }, db -> tp[0].readSettled("accounts", List.of("alice", "bob"), Duration.ofSeconds(5))));

        Ledger[] ledger = new Ledger[1];
        Consumer<MongoDatabase> books = db -> {
            ledger[0] = Ledger.on(db);
            ledger[0].ensureIndexes();
            ledger[0].submit(LedgerTransaction.transfer("alice", "bob", 1));
            ledger[0].recover(Duration.ZERO);
            ledger[0].balance("alice");
            ledger[0].balances(List.of("alice", "bob"));
        };
        MEASURED.put("ledger append", measure(books, db -> ledger[0].submit(LedgerTransaction.transfer("alice",
                "bob", 5))));
        MEASURED.put("ledger balance", measure(books, db -> ledger[0].balance("alice")));
        MEASURED.put("ledger balances", measure(books, db -> ledger[0].balances(List.of("alice", "bob"))));
        long counter = measure(db -> {
            ledger[0] = Ledger.builder(db).seqAllocation(SeqAllocation.COUNTER).build();
            ledger[0].ensureIndexes();
            ledger[0].submit(LedgerTransaction.transfer("alice", "bob", 1));
        }, db -> ledger[0].submit(LedgerTransaction.transfer("alice", "bob", 5)));
        // a two-account transfer reserves one sequence number per account
        MEASURED.put("counter allocation extra per account", (counter - MEASURED.get("ledger append")) / 2);

        JobQueue[] queue = new JobQueue[1];
        Consumer<MongoDatabase> jobs = db -> {
            db.getCollection("users").insertMany(List.of(new Document("_id", "ann"), new Document("_id", "bob")));
            queue[0] = JobQueue.builder(db).handler("none", ctx -> { })
                    .handler("one", ctx -> ctx.applyOnce("users", "ann", Updates.inc("n", 1))).build();
            queue[0].ensureIndexes();
            JobQueue.ensureOutboxIndex(db.getCollection("users"));
            queue[0].apply(JobRequest.of("one", new Document()));
            queue[0].enqueueWith(db.getCollection("users"), "bob", null, Updates.inc("n", 1),
                    JobRequest.of("none", new Document()));
        };
        MEASURED.put("enqueue", measure(jobs, db -> queue[0].enqueue(JobRequest.of("none", new Document()))));
        long plainRun = measure(jobs, db -> queue[0].apply(JobRequest.of("none", new Document())));
        long oneEffect = measure(jobs, db -> queue[0].apply(JobRequest.of("one", new Document())));
        MEASURED.put("job own work", plainRun);
        // once the job is done its effects are settled apart: one write per collection, one to record it settled
        MEASURED.put("applyOnce", oneEffect - plainRun - 2);
        long plainUpdate = measure(jobs, db -> db.getCollection("users").updateOne(Filters.eq("_id", "bob"),
                Updates.inc("n", 1)));
        long withJob = measure(jobs, db -> queue[0].enqueueWith(db.getCollection("users"), "bob", null,
                Updates.inc("n", 1), JobRequest.of("none", new Document())));
        // then the relay of its entry: read the outbox, record the job held, read the entry again, release the job,
        // clear the entry
        long relay = 5;
        MEASURED.put("enqueueWith extra", withJob - plainUpdate - relay);
        MEASURED.put("ordered enqueue", measure(jobs, db -> queue[0].enqueue(JobRequest.of("none", new Document())
                .withOrderingKey("k"))));
        MEASURED.put("ordered job own work", measure(jobs, db -> queue[0].apply(JobRequest.of("none",
                new Document()).withOrderingKey("k"))));
        MEASURED.put("limited enqueue", measure(jobs, db -> queue[0].enqueue(JobRequest.of("none", new Document())
                .withConcurrencyKey("k", 2))));
        MEASURED.put("limited job own work", measure(jobs, db -> queue[0].apply(JobRequest.of("none",
                new Document()).withConcurrencyKey("k", 2))));
        Consumer<MongoDatabase> schedule = db -> {
            jobs.accept(db);
            queue[0].schedule("hourly", Schedule.fixedDelay(Duration.ofHours(1)), JobRequest.of("none", null));
        };
        MEASURED.put("fire occurrence", measure(schedule, db -> queue[0].fireSchedules()));
        MEASURED.put("fire nothing due", measure(db -> {
            schedule.accept(db);
            queue[0].fireSchedules();
        }, db -> queue[0].fireSchedules()));

        VersionedStore[] store = new VersionedStore[1];
        Consumer<MongoDatabase> catalogue = db -> {
            store[0] = VersionedStore.on(db);
            store[0].ensureIndexes();
            store[0].createRoot("c");
            store[0].apply(ChangeSet.on("c", 0).put("a", new Document("p", 1)).put("b", new Document("p", 2))
                    .put("x", new Document("p", 3)).build());
            store[0].read("c");
        };
        MEASURED.put("versioning commit", measure(catalogue, db -> store[0].apply(ChangeSet.on("c", 1)
                .put("a", new Document("p", 4)).put("b", new Document("p", 5)).put("x", new Document("p", 6))
                .build())));
        MEASURED.put("versioning stage", measure(catalogue, db -> store[0].submit(ChangeSet.on("c", 1)
                .put("a", new Document("p", 4)).build())));
        MEASURED.put("versioning read", measure(catalogue, db -> store[0].read("c")));
        MEASURED.put("versioning update", measure(catalogue, db -> store[0].update("c", (tree, change) -> change
                .put("a", new Document("p", 7)))));
        // update is the read and the direct commit
        MEASURED.put("versioning direct commit", MEASURED.get("versioning update") - MEASURED.get("versioning read"));
        MEASURED.put("versioning read as of", measure(catalogue, db -> store[0].readAsOf("c", 1)));
        MEASURED.put("versioning read as of a time", measure(catalogue, db -> store[0].readAsOf("c",
                java.time.Instant.parse("9999-01-01T00:00:00Z"))));
        MEASURED.put("versioning get", measure(catalogue, db -> store[0].get("c", "a")));
        // a root that carries no tree (committed by a store that writes none) is read with the aggregation after it
        MEASURED.put("versioning uncarried extra", measure(db -> {
            catalogue.accept(db);
            VersionedStore.builder(db).inlineTreeBytes(0).build().update("c", (tree, change) -> change
                    .put("a", new Document("p", 8)));
        }, db -> store[0].read("c")) - MEASURED.get("versioning read"));

        SyncFlag[] sync = new SyncFlag[1];
        MEASURED.put("rename one target", measure(db -> {
            db.getCollection("users").insertOne(new Document("_id", "ann").append("name", "Ann"));
            db.getCollection("comments").insertOne(new Document("_id", "c1").append("authorId", "ann")
                    .append("authorName", "Ann"));
            sync[0] = SyncFlag.builder(db).master("users", "name").target(SyncTarget.in("comments", "authorId")
                    .copy("name", "authorName")).build();
            sync[0].ensureIndexes();
            sync[0].update("ann", Updates.set("name", "A"));
        }, db -> sync[0].update("ann", Updates.set("name", "Ann Smith"))));

        EffectMarker marker = EffectMarker.of("reserved", "applied");
        MEASURED.put("settle alone", measure(db -> {
            db.getCollection("docs").insertOne(new Document("_id", "d"));
            OnceEffects.reserve(db.getCollection("docs"), marker, "op", "n1", List.of(MarkerWrite.of("d", null)));
            OnceEffects.apply(db.getCollection("docs"), marker, "op", "n1", List.of(MarkerWrite.of("d", null)));
        }, db -> OnceEffects.settle(db.getCollection("docs"), marker, "op", List.of(MarkerWrite.of("d", null)))));
        MEASURED.put("transition", measure(db -> db.getCollection("ops").insertOne(new Document("_id", "o")
                .append("state", "a")), db -> ConditionalUpdates.transition(db.getCollection("ops"), "o",
                Transition.of("state", "a", "b"))));
    }

    /** Every file that may state a count: the README, the docs, every main source. */
    private static List<Path> documents() {
        List<Path> files = new ArrayList<>();
        files.add(root().resolve("README.md"));
        try (Stream<Path> docs = Files.walk(root().resolve("docs")); Stream<Path> all = Files.walk(root())) {
            docs.filter(p -> p.toString().endsWith(".md")).forEach(files::add);
            all.filter(p -> p.toString().endsWith(".java") && p.toString().contains("/src/main/java/")
                    && !p.toString().contains("/target/")).forEach(files::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return files;
    }

    @Test
    void shouldRegisterEveryStatedRoundTripCount() {
        List<String> unregistered = new ArrayList<>();
        for (Path file : documents()) {
            String relative = root().relativize(file).toString();
            String text = read(file).replaceAll("\\s*\\n\\s*(\\* ?|// ?)?", " ");
            Matcher m = STATEMENT.matcher(text);
            while (m.find()) {
                int at = m.start();
                boolean registered = CLAIMS.stream().filter(c -> c.file().equals(relative)).anyMatch(c -> {
                    int i = text.indexOf(c.phrase());
                    while (i >= 0) {
                        if (at >= i && at < i + c.phrase().length()) {
                            return true;
                        }
                        i = text.indexOf(c.phrase(), i + 1);
                    }
                    return false;
                });
                if (!registered) {
                    unregistered.add(relative + ": \"" + text.substring(Math.max(0, at - 60), Math.min(text.length(),
                            m.end() + 20)) + "\"");
                }
            }
        }
        assertThat(unregistered).as("round-trip counts stated without a registered operation: add each to CLAIMS"
                + " with what it counts").isEmpty();
    }

    @Test
    void shouldStateEveryCountAsTheCodeSendsIt() {
        List<String> wrong = new ArrayList<>();
        for (Claim claim : CLAIMS) {
            String text = read(root().resolve(claim.file())).replaceAll("\\s*\\n\\s*(\\* ?|// ?)?", " ");
            if (!text.contains(claim.phrase())) {
                wrong.add(claim.file() + " no longer says \"" + claim.phrase() + "\"");
                continue;
            }
            if (claim.operation().equals(PRINTED)) {
                continue;
            }
            Matcher m = STATEMENT.matcher(claim.phrase());
            assertThat(m.find()).as(claim.phrase()).isTrue();
            String n = m.group(1);
            long stated = WORDS.containsKey(n.toLowerCase(java.util.Locale.ROOT))
                    ? WORDS.get(n.toLowerCase(java.util.Locale.ROOT)) : Long.parseLong(n);
            long measured = MEASURED.get(claim.operation());
            if (stated != measured) {
                wrong.add(claim.file() + " says \"" + claim.phrase() + "\"; " + claim.operation() + " sends "
                        + measured);
            }
        }
        assertThat(wrong).as("measured: " + MEASURED).isEmpty();
    }
}
