package dev.consistencykit.jobqueue;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * Recurring jobs on a clock the test moves: each occurrence enqueues its job once, whoever fires it and however
 * often; missed occurrences as the policy says; a fixed delay counted from the end of the previous run; a change or a
 * removal takes effect at once and leaves a fired occurrence to run.
 */
@ExtendWith(MongoTestExtension.class)
class RecurringJobsTest {

    private static final JobRequest COUNT = JobRequest.of("count", new Document("counter", "c0"));

    /** Server time that moves only when the test says: a manual clock, measured once against the server's. */
    private static final class Time {
        final JobQueueBehaviourTest.ManualClock clock = new JobQueueBehaviourTest.ManualClock();
        final ServerClock server;

        Time(MongoDatabase db) {
            server = ServerClock.of(db, clock, Duration.ofDays(3650));
        }

        void moveTo(Instant target) {
            clock.advance(Duration.between(server.now(), target));
        }

        void advance(Duration by) {
            clock.advance(by);
        }
    }

    private static JobQueue queue(MongoDatabase db, Time time) {
        return Friends.queue(db).serverClock(time.server).build();
    }

    private static List<Object> jobIds(MongoDatabase db) {
        return db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find().map(d -> d.get("_id"))
                .into(new ArrayList<>());
    }

    private static long counted(MongoDatabase db) {
        return db.getCollection(Friends.COUNTERS).find(eq("_id", "c0")).first().getLong("n");
    }

    @Test
    void shouldEnqueueEachOccurrenceOnceWhoeverFiresIt(MongoDatabase db) {
        Friends.seedCounters(db, 1);
        Time clock = new Time(db);
        JobQueue first = queue(db, clock);
        JobQueue second = queue(db, clock);
        first.ensureIndexes();
        RecurringJob defined = first.schedule("minutely", Schedule.cron("* * * * *"), COUNT);
        Instant due = defined.nextRun().orElseThrow();
        assertThat(second.schedule("minutely", Schedule.cron("* * * * *"), COUNT)).as("the same again: nothing written")
                .isEqualTo(defined);
        assertThat(first.fireSchedules()).as("not due yet").isZero();

        clock.moveTo(due.plusSeconds(1));
        int fired = first.fireSchedules() + second.fireSchedules() + first.fireSchedules();

        assertThat(fired).isEqualTo(1);
        OperationId job = RecurringJob.occurrenceId("minutely", due);
        assertThat(jobIds(db)).containsExactly(job.value());
        RecurringJob after = second.operator().recurringJob("minutely").orElseThrow();
        assertThat(after.lastRun()).contains(due);
        assertThat(after.lastJob()).contains(job);
        assertThat(after.nextRun()).contains(due.plusSeconds(60));
        assertThat(first.processNext()).isPresent();
        assertThat(counted(db)).isEqualTo(1);
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_SCHEDULES_COLLECTION).find().first())
                .as("the firing's outbox entries all settled").doesNotContainKeys("jobOutbox", "jobOutboxReserved");
    }

    @Test
    void shouldTreatMissedOccurrencesAsEachPolicySays(MongoDatabase db) {
        Friends.seedCounters(db, 1);
        Time clock = new Time(db);
        JobQueue queue = queue(db, clock);
        queue.ensureIndexes();
        Instant once = queue.schedule("once", Schedule.cron("* * * * *"), COUNT).nextRun().orElseThrow();
        queue.schedule("skip", Schedule.cron("* * * * *").missedRuns(Schedule.MissedRuns.SKIP), COUNT);
        queue.schedule("each", Schedule.cron("* * * * *").missedRuns(Schedule.MissedRuns.EACH), COUNT);

        clock.moveTo(once.plus(Duration.ofSeconds(9 * 60 + 30)));   // ten occurrences each, none fired
        Instant now = once.plus(Duration.ofMinutes(9));
        assertThat(queue.fireSchedules()).isEqualTo(1 + 10);

        List<Object> ids = jobIds(db);
        assertThat(ids).contains(RecurringJob.occurrenceId("once", once).value());
        assertThat(ids).filteredOn(id -> id.toString().startsWith("once@")).hasSize(1);
        assertThat(ids).filteredOn(id -> id.toString().startsWith("skip@")).isEmpty();
        assertThat(ids).filteredOn(id -> id.toString().startsWith("each@")).hasSize(10);
        for (String name : List.of("once", "skip", "each")) {
            assertThat(queue.operator().recurringJob(name).orElseThrow().nextRun()).as(name).contains(now.plusSeconds(60));
        }

        clock.advance(Duration.ofMinutes(1));   // on time: every policy runs it
        assertThat(queue.fireSchedules()).isEqualTo(3);
    }

    @Test
    void shouldStartAFixedDelayWhenThePreviousRunEnded(MongoDatabase db) {
        Friends.seedCounters(db, 1);
        Time clock = new Time(db);
        JobQueue queue = queue(db, clock);
        queue.ensureIndexes();
        queue.schedule("every-5m", Schedule.fixedDelay(Duration.ofMinutes(5)), COUNT);

        assertThat(queue.fireSchedules()).as("the first is due at once").isEqualTo(1);
        assertThat(queue.fireSchedules()).as("then not before it ended").isZero();
        assertThat(queue.schedule("one-at-a-time", Schedule.fixedDelay(Duration.ofHours(1)),
                COUNT.withConcurrencyKey("counting", 1)).name()).isEqualTo("one-at-a-time");
        assertThat(queue.fireSchedules()).isEqualTo(1);
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("lineKey", "limit:counting"))
                .first()).as("an occurrence carries its template's concurrency key").isNotNull();
        assertThat(queue.processNext()).isPresent();
        assertThat(queue.processNext()).isPresent();
        clock.advance(Duration.ofMinutes(2));
        assertThat(queue.fireSchedules()).as("ended two minutes ago: three to go").isZero();
        clock.advance(Duration.ofMinutes(4));
        assertThat(queue.fireSchedules()).isEqualTo(1);
        queue.unschedule("one-at-a-time");
        clock.advance(Duration.ofMinutes(30));
        assertThat(queue.fireSchedules()).as("the previous run has not ended").isZero();
        assertThat(jobIds(db)).filteredOn(id -> id.toString().startsWith("every-5m@")).hasSize(2);
    }

    @Test
    void shouldRefuseTheOldDefinitionOnceChangedOrRemovedAndRunWhatFired(MongoDatabase db) {
        Friends.seedCounters(db, 2);
        Time clock = new Time(db);
        JobQueue queue = queue(db, clock);
        queue.ensureIndexes();
        clock.moveTo(queue.schedule("tick", Schedule.cron("* * * * *"), COUNT).nextRun().orElseThrow());
        assertThat(queue.fireSchedules()).isEqualTo(1);

        RecurringJob changed = queue.schedule("tick", Schedule.cron("0 * * * *"),
                JobRequest.of("count", new Document("counter", "c1")));
        assertThat(changed.schedule()).isEqualTo(Schedule.cron("0 * * * *"));
        assertThat(changed.nextRun().orElseThrow()).isAfter(clock.server.now());
        assertThat(queue.processNext()).as("the occurrence fired before the change runs").isPresent();
        assertThat(counted(db)).isEqualTo(1);

        assertThat(queue.unschedule("tick")).isTrue();
        assertThat(queue.unschedule("tick")).isFalse();
        clock.advance(Duration.ofDays(1));
        assertThat(queue.fireSchedules()).isZero();
        assertThat(queue.operator().recurringJob("tick")).isEmpty();
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_SCHEDULES_COLLECTION).countDocuments()).isZero();
        assertThat(jobIds(db)).hasSize(1);
    }

    /**
     * A definition whose first occurrence is one fired already (a process whose clock is 5 ms behind changes the
     * schedule, or removes and defines it again, just after another fired that second; or one process's clock steps
     * back over a second): that occurrence's job id is taken. The schedule moves past it to the next occurrence, which
     * fires; the taken one is not enqueued again and is not counted as fired.
     */
    @ParameterizedTest
    @ValueSource(strings = {"changed by a process 5 ms behind", "removed and defined again by a process 5 ms behind",
            "changed after this process's clock stepped back"})
    void shouldMovePastAnOccurrenceWhoseJobIdIsTaken(String how, MongoDatabase db) {
        Friends.seedCounters(db, 1);
        JobQueueBehaviourTest.ManualClock clock = new JobQueueBehaviourTest.ManualClock();   // 2030-01-01T00:00:00Z
        JobQueue ahead = Friends.queue(db).serverClock(ServerClock.unsynchronized(clock)).build();
        boolean stepsBack = how.contains("stepped back");
        JobQueue other = stepsBack ? ahead : Friends.queue(db).serverClock(ServerClock.unsynchronized(
                java.time.Clock.offset(clock, Duration.ofMillis(-5)))).build();
        ahead.ensureIndexes();
        Schedule everySecond = Schedule.cron("* * * * * *");
        Instant first = ahead.schedule("tick", everySecond, COUNT).nextRun().orElseThrow();
        assertThat(first).isEqualTo(Instant.parse("2030-01-01T00:00:01Z"));
        // 00:00:01.003, the other process at 00:00:00.998; or 00:00:01.900 before the clock steps back 1.2 s
        clock.advance(Duration.ofMillis(stepsBack ? 1_900 : 1_003));
        assertThat(ahead.fireSchedules()).isEqualTo(1);   // tick@00:00:01

        if (stepsBack) {
            clock.advance(Duration.ofMillis(-1_200));   // 00:00:00.700: more than ServerClock hides
        }
        JobRequest changedJob = JobRequest.of("count", new Document("counter", "c0").append("by", 2));
        if (how.startsWith("removed")) {
            assertThat(other.unschedule("tick")).isTrue();
            assertThat(other.schedule("tick", everySecond, COUNT).nextRun()).contains(first);
        } else {
            assertThat(other.schedule("tick", everySecond, changedJob).nextRun()).as("its first occurrence is"
                    + " the one fired").contains(first);
        }
        if (stepsBack) {
            clock.advance(Duration.ofMillis(1_200));
        }
        assertThat(ahead.fireSchedules() + other.fireSchedules()).as("the taken occurrence is not fired again")
                .isZero();
        assertThat(ahead.operator().recurringJob("tick").orElseThrow().nextRun()).as("moved past it")
                .contains(Instant.parse("2030-01-01T00:00:02Z"));

        clock.advance(Duration.ofSeconds(1));   // 00:00:02.003 or 00:00:02.900
        assertThat(ahead.fireSchedules() + other.fireSchedules()).isEqualTo(1);
        assertThat(jobIds(db)).containsExactlyInAnyOrder(RecurringJob.occurrenceId("tick", first).value(),
                RecurringJob.occurrenceId("tick", first.plusSeconds(1)).value());
        assertThat(other.operator().recurringJob("tick").orElseThrow().nextRun())
                .contains(Instant.parse("2030-01-01T00:00:03Z"));
    }

    /**
     * Paused, a schedule fires nothing, in any process and across restarts (registering it again keeps it paused);
     * resumed, a cron schedule runs at its first occurrence after now. A trigger runs it once more beside its
     * occurrences, paused or not, one job per call.
     */
    @Test
    void shouldPauseResumeAndTriggerASchedule(MongoDatabase db) {
        Friends.seedCounters(db, 1);
        Time clock = new Time(db);
        JobQueue operatorsProcess = queue(db, clock);
        JobQueue worker = queue(db, clock);
        operatorsProcess.ensureIndexes();
        Instant due = operatorsProcess.schedule("minutely", Schedule.cron("* * * * *"), COUNT).nextRun().orElseThrow();

        assertThat(operatorsProcess.operator().pauseSchedule("minutely")).isTrue();
        assertThat(operatorsProcess.operator().pauseSchedule("minutely")).as("paused already: nothing written").isTrue();
        assertThat(operatorsProcess.operator().pauseSchedule("nope")).isFalse();
        RecurringJob paused = worker.operator().recurringJob("minutely").orElseThrow();
        assertThat(paused.paused()).isTrue();
        assertThat(paused.nextRun()).isEmpty();
        clock.moveTo(due.plus(Duration.ofMinutes(5)));
        worker.recover();
        assertThat(worker.fireSchedules()).isZero();
        assertThat(worker.schedule("minutely", Schedule.cron("* * * * *"), COUNT).paused()).as("registered again at"
                + " a start: still paused").isTrue();
        assertThat(worker.schedule("minutely", Schedule.cron("*/2 * * * *"), COUNT).paused()).as("changed: still"
                + " paused").isTrue();
        assertThat(worker.fireSchedules()).isZero();
        assertThat(jobIds(db)).isEmpty();

        OperationId triggered = operatorsProcess.operator().triggerSchedule("minutely").orElseThrow();
        assertThat(triggered.value().toString()).startsWith("minutely@").endsWith("!");
        assertThat(jobIds(db)).containsExactly(triggered.value());
        assertThat(worker.processNext()).isPresent();
        assertThat(counted(db)).isEqualTo(1);
        assertThat(operatorsProcess.operator().triggerSchedule("nope")).isEmpty();

        assertThat(operatorsProcess.operator().resumeSchedule("minutely")).isTrue();
        RecurringJob resumed = worker.operator().recurringJob("minutely").orElseThrow();
        assertThat(resumed.paused()).isFalse();
        Instant next = resumed.nextRun().orElseThrow();
        assertThat(next).isAfter(due.plus(Duration.ofMinutes(5)));
        clock.moveTo(next.plusSeconds(1));
        assertThat(worker.fireSchedules()).isEqualTo(1);
        assertThat(jobIds(db)).hasSize(2).contains(RecurringJob.occurrenceId("minutely", next).value());
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_SCHEDULES_COLLECTION).find().first())
                .doesNotContainKeys("jobOutbox", "jobOutboxReserved", "paused");
    }

    @Test
    void shouldRefuseHostileDefinitionsBeforeAnyWrite(MongoDatabase db) {
        JobQueue queue = queue(db, new Time(db));
        Schedule hourly = Schedule.cron("0 * * * *");
        assertThatThrownBy(() -> queue.schedule(" ", hourly, COUNT)).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> queue.schedule("x".repeat(201), hourly, COUNT))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> queue.schedule("late", hourly, COUNT.delayedBy(Duration.ofSeconds(1))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("delay");
        assertThatThrownBy(() -> queue.schedule("keyed", hourly, COUNT.withDedupeKey("k")))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("dedupe");
        assertThatThrownBy(() -> queue.schedule("op", hourly, JobRequest.of("count",
                new Document("$set", new Document("n", 1))))).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> queue.schedule("never", Schedule.cron("0 0 30 2 *"), COUNT))
                .isInstanceOf(InvalidInputException.class);
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_SCHEDULES_COLLECTION).countDocuments()).isZero();
    }

    @Test
    void shouldSetAsideAScheduleSomethingElseRewroteAndFireTheOthers(MongoDatabase db) {
        Friends.seedCounters(db, 1);
        Time clock = new Time(db);
        JobQueue queue = queue(db, clock);
        queue.ensureIndexes();
        queue.schedule("a", Schedule.cron("* * * * *"), COUNT);
        queue.schedule("b", Schedule.cron("* * * * *"), COUNT);
        Instant due = queue.schedule("c", Schedule.cron("* * * * *"), COUNT).nextRun().orElseThrow();
        var schedules = db.getCollection(JobQueueConfig.DEFAULT_SCHEDULES_COLLECTION);
        schedules.updateOne(eq("_id", "a"), Updates.set("job.payload", "not a document"));
        schedules.updateOne(eq("_id", "b"), Updates.set("cron", "not a cron"));
        clock.moveTo(due.plusSeconds(1));

        assertThat(queue.fireSchedules()).isEqualTo(1);
        assertThat(queue.operator().recurringJobs(0, 10)).extracting(RecurringJob::name).containsExactly("c");
        assertThat(jobIds(db)).singleElement().asString().startsWith("c@");
    }

    @Test
    void shouldFireFromTheWorkerPool(MongoDatabase db) throws InterruptedException {
        CountDownLatch ran = new CountDownLatch(2);
        JobQueue queue = JobQueue.builder(db).maxIdle(Duration.ofMillis(20))
                .handler("tick", ctx -> ran.countDown()).build();
        queue.ensureIndexes();
        queue.schedule("often", Schedule.fixedDelay(Duration.ofMillis(1)), JobRequest.of("tick", null));
        try (JobWorkers workers = queue.startWorkers(1)) {
            assertThat(ran.await(60, TimeUnit.SECONDS)).as("two occurrences ran").isTrue();
            assertThat(workers.health().errors()).isZero();
        }
    }
}
