package dev.consistencykit.jobqueue;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.Date;

import org.bson.Document;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.ChaosRunner;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

@ExtendWith(MongoTestExtension.class)
class ScaleAndChaosTest {

    static final int SEEDS = 200;

    /**
     * Thousands of jobs, each run once by 16 workers racing for them. The embedded server narrows a claim to the due
     * jobs through the claim-order index's leading key but then matches and compares every one of them (mongod walks
     * the index in claim order and stops at the first), so a claim costs time linear in the queue there and this
     * test quadratic: 10,000 jobs took 2.5 minutes of a 12-minute suite on 2 cores. 3,000 keep every worker busy and
     * contending for the whole run; throughput at size is what {@code consistency-kit bench job-queue} measures.
     */
    // heavy: on a real engine only when asked (docs/servers.md): thousands of jobs: volume; the 200 chaos seeds beside
    // it run on every server
    @Tag("heavy")
    @Test
    void shouldRunThousandsOfJobsOnceEachWith16Workers(MongoDatabase db) {
        int counters = 100;
        int jobs = 3_000;
        Friends.seedCounters(db, counters);
        JobQueue queue = Friends.queue(db).build();
        queue.ensureIndexes();
        for (int i = 0; i < jobs; i++) {
            queue.enqueue(JobRequest.of("count", new Document("counter", "c" + (i % counters)))
                    .withId(OperationId.of(i)));
        }

        try (JobWorkers workers = queue.startWorkers(16)) {
            long deadline = System.nanoTime() + Duration.ofMinutes(8).toNanos();
            while (queue.status().inFlight() > 0 && System.nanoTime() < deadline) {
                sleep(1_000);
            }
            assertThat(workers.shutdown(Duration.ofSeconds(10))).isTrue();
        }

        assertThat(queue.status().count("done")).isEqualTo(jobs);
        assertThat(queue.status().count("processing")).isZero();
        long total = 0;
        for (Document c : db.getCollection(Friends.COUNTERS).find()) {
            assertThat(c.getLong("n")).as(c.getString("_id")).isEqualTo(jobs / counters);
            total += c.getLong("n");
        }
        assertThat(total).isEqualTo(jobs);
        assertThat(Friends.invariants(db)).isEmpty();
    }

    static ChaosRunner runner(MongoClient client) {
        return ChaosRunner.builder(client)
                .name("jobs")
                .workers(8).operationsPerWorker(4).faultRate(0.08).maxPause(Duration.ofMillis(15)).recoverers(2)
                .workload(FriendsWorkload.jobs().recoveredBy(db -> Friends.queue(db).maxAttempts(50).build()
                        .recover(Duration.ZERO)))
                .build();
    }

    @Test
    void shouldKeepEveryInvariantAcross200Seeds(MongoClient client) {
        ChaosRunner.Summary summary = runner(client).runSeeds(1, SEEDS);

        assertThat(summary.seeds()).isEqualTo(SEEDS);
        assertThat(summary.crashes()).isPositive();
        assertThat(summary.failures()).as(summary.toString()).isEmpty();
    }

    /** Seeds of the keyed chaos: fewer, each runs more jobs through lines. */
    static final int KEYED_SEEDS = 50;

    /**
     * Crashing processes each fire a schedule of every second (missed occurrences each run), enqueue a pair of jobs on
     * an ordering key or on a concurrency key of 1, then run two jobs, while recoverers run beside them: every job runs
     * once, the second of each pair after the first, no line is left, and every occurrence fired runs once.
     */
    static ChaosRunner keyedRunner(MongoClient client) {
        return ChaosRunner.builder(client)
                .name("keyed-jobs")
                .workers(6).operationsPerWorker(3).faultRate(0.08).maxPause(Duration.ofMillis(15)).recoverers(2)
                .workload(FriendsWorkload.on().seededBy(db -> {
                    OrderingKeysTest.seedLogs(db, "a", "b", "ticks");
                    JobQueue queue = OrderingKeysTest.queue(db).build();
                    queue.ensureIndexes();
                    Instant next = queue.schedule("tick", EVERY_SECOND, JobRequest.of("tick", null)).nextRun()
                            .orElseThrow();
                    // ten occurrences already due, for the crashing processes to fire
                    Instant first = next.minusSeconds(10);
                    db.getCollection(JobQueueConfig.DEFAULT_SCHEDULES_COLLECTION).updateOne(
                            com.mongodb.client.model.Filters.eq("_id", "tick"),
                            com.mongodb.client.model.Updates.set("next", Date.from(first)));
                    db.getCollection("firstTick").insertOne(new Document("_id", "tick").append("at", Date.from(first)));
                }).operation((db, ignored, random) -> {
                            JobQueue queue = OrderingKeysTest.queue(db).maxAttempts(50).build();
                            queue.fireSchedules();
                            String pair = Long.toHexString(random.nextLong());
                            String log = random.nextBoolean() ? "a" : "b";
                            boolean ordering = random.nextBoolean();
                            for (int n = 1; n <= 2; n++) {
                                JobRequest step = JobRequest.of("step", new Document("log", log)
                                        .append("n", pair + "-" + n)).withId(OperationId.of(pair + "-" + n))
                                        .withMaxAttempts(50);
                                queue.enqueue(ordering ? step.withOrderingKey(log)
                                        : step.withConcurrencyKey("limit-" + log, 1));
                            }
                            queue.processNext();
                            queue.processNext();
                        })
                        .recoveredBy(db -> OrderingKeysTest.queue(db).maxAttempts(50).build().recover(Duration.ZERO))
                        .checkedBy(ScaleAndChaosTest::pairsInOrder))
                .build();
    }

    /** A schedule every second whose missed occurrences each run: what the keyed chaos fires beside its jobs. */
    static final Schedule EVERY_SECOND = Schedule.cron("* * * * * *").missedRuns(Schedule.MissedRuns.EACH);

    /**
     * Every job done and its effect logged once; each pair's second after its first; no line left; every occurrence
     * of the schedule from its first to its last fired has its job, run once, and none other.
     */
    static java.util.List<String> pairsInOrder(MongoDatabase db) {
        java.util.List<String> problems = new java.util.ArrayList<>();
        java.util.Map<Object, Integer> at = new java.util.HashMap<>();
        Document schedule = db.getCollection(JobQueueConfig.DEFAULT_SCHEDULES_COLLECTION).find().first();
        Instant firstTick = db.getCollection("firstTick").find().first().getDate("at").toInstant();
        java.util.Set<Object> occurrences = new java.util.HashSet<>();
        if (schedule.get("lastRun") instanceof Date last) {
            for (Instant t = firstTick; !t.isAfter(last.toInstant()); t = EVERY_SECOND.nextAfter(t).orElseThrow()) {
                occurrences.add(RecurringJob.occurrenceId("tick", t).value());
            }
        }
        java.util.Set<Object> ticks = new java.util.HashSet<>(OrderingKeysTest.seen(db, "ticks"));
        if (ticks.size() != OrderingKeysTest.seen(db, "ticks").size()) {
            problems.add("an occurrence ran twice: " + OrderingKeysTest.seen(db, "ticks"));
        }
        if (!ticks.equals(occurrences)) {
            problems.add("occurrences fired " + occurrences + " but ran " + ticks);
        }
        for (String log : java.util.List.of("a", "b")) {
            java.util.List<Object> seen = OrderingKeysTest.seen(db, log);
            for (int i = 0; i < seen.size(); i++) {
                if (at.put(seen.get(i), i) != null) {
                    problems.add("log " + log + " holds " + seen.get(i) + " twice");
                }
            }
        }
        for (Document job : db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find()) {
            String id = String.valueOf(job.get("_id"));
            if (!"done".equals(job.getString("state"))) {
                problems.add("job " + id + " is " + job.getString("state"));
            }
            if (id.startsWith("tick@")) {
                continue;   // checked against the schedule above
            }
            if (!at.containsKey(id)) {
                problems.add("job " + id + " left no effect");
            }
            if (id.endsWith("-2")) {
                Integer first = at.get(id.substring(0, id.length() - 2) + "-1");
                Integer second = at.get(id);
                if (second != null && (first == null || first > second)) {
                    problems.add("job " + id + " ran before the job enqueued before it with its key");
                }
            }
        }
        for (Document line : db.getCollection(JobQueueConfig.DEFAULT_KEYS_COLLECTION).find()) {
            problems.add("a line is left: " + line.toJson());
        }
        return problems;
    }

    @Test
    void shouldKeepEveryKeysOrderAcrossCrashingProcesses(MongoClient client) {
        ChaosRunner.Summary summary = keyedRunner(client).runSeeds(1, KEYED_SEEDS);

        assertThat(summary.seeds()).isEqualTo(KEYED_SEEDS);
        assertThat(summary.crashes()).isPositive();
        assertThat(summary.failures()).as(summary.toString()).isEmpty();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

}
