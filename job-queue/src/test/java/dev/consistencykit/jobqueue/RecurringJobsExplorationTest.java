package dev.consistencykit.jobqueue;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ServerClock;
import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.InterleavingExplorer;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * One occurrence of a recurring job fired and run, crashed at every write, and paused at every call while the other
 * actors of a schedule run: a second firer, a recoverer, a worker, a relayer of the schedules' outbox, a process that
 * registers the same schedule at its start, a pruner days ahead, and a process that fires, runs and prunes the
 * occurrence whole (a firer paused past every retention then finds only the schedule). The occurrence runs exactly once: its effect
 * witnessed once, the schedule moved past it, nothing left in the schedule's outbox.
 */
@ExtendWith(MongoTestExtension.class)
class RecurringJobsExplorationTest {

    private static final String NAME = "yearly";
    private static final Schedule YEARLY = Schedule.cron("0 0 1 1 *");
    private static final JobRequest COUNT = JobRequest.of("count", new Document("counter", "c0"));
    /** Where the seed notes the occurrence it made due, for every process to set its clock by. */
    private static final String CLOCK = "testClock";

    /** A queue whose clock stands 30 seconds after the occurrence the seed made due. */
    private static JobQueue queueAtOccurrence(MongoDatabase db) {
        Date due = db.getCollection(CLOCK).find(eq("_id", NAME)).first().getDate("due");
        return Friends.queue(db).serverClock(ServerClock.unsynchronized(Clock.fixed(due.toInstant()
                .plusSeconds(30), ZoneOffset.UTC))).build();
    }

    private static Instant due(MongoDatabase db) {
        return db.getCollection(CLOCK).find(eq("_id", NAME)).first().getDate("due").toInstant();
    }

    /** A queue three days after the occurrence, keeping done jobs one day. */
    private static JobQueue pruner(MongoDatabase db) {
        return Friends.queue(db).retention(Duration.ofDays(1)).serverClock(ServerClock.unsynchronized(Clock.fixed(
                due(db).plus(Duration.ofDays(3)), ZoneOffset.UTC))).build();
    }

    static FriendsWorkload occurrence() {
        return seeded().operation((db, ignored, random) -> {
            JobQueue queue = queueAtOccurrence(db);
            queue.fireSchedules();
            queue.processNext();
        }).recoveredBy(db -> queueAtOccurrence(db).recover(Duration.ZERO))
                .checkedBy(RecurringJobsExplorationTest::ranOnce);
    }

    /**
     * The occurrence's effect witnessed exactly once (whether or not its job is still kept), the schedule moved past
     * it and naming its job, nothing left in the schedule's outbox; every job terminal.
     */
    static List<String> ranOnce(MongoDatabase db) {
        List<String> problems = new ArrayList<>(Friends.invariants(db));
        Instant due = due(db);
        Object job = RecurringJob.occurrenceId(NAME, due).value();
        Document counter = db.getCollection(Friends.COUNTERS).find(eq("_id", "c0")).first();
        List<Object> witnessed = counter.getList(Friends.WITNESS, Object.class, List.of());
        if (!witnessed.equals(List.of(job))) {
            problems.add("the occurrence due at " + due + " ran as " + witnessed + ", not once as " + job);
        }
        Document schedule = db.getCollection(JobQueueConfig.DEFAULT_SCHEDULES_COLLECTION).find(eq("_id", NAME))
                .first();
        if (schedule == null) {
            problems.add("the schedule is gone");
            return problems;
        }
        if (!(schedule.get("next") instanceof Date next) || !next.toInstant().isAfter(due)
                || !(schedule.get("lastRun") instanceof Date last) || !last.toInstant().equals(due)
                || !job.equals(schedule.get("lastJob"))) {
            problems.add("the schedule did not move past its occurrence: " + schedule.toJson());
        }
        problems.addAll(outboxLeftOn(schedule));
        return problems;
    }

    @Test
    void shouldRunAnOccurrenceOnceWhenItsFiringCrashesAtAnyWrite(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client).name("recurring-occurrence")
                .workload(occurrence()).recoveryFaults(true).build().explore();

        assertThat(report.sites()).extracting(s -> s.collection()).contains("jobSchedules", "jobs", "counters");
        assertThat(report.scenarios()).isGreaterThanOrEqualTo(1 + report.sites().size() * FaultMode.values().length);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldRunAnOccurrenceOnceWhateverRunsBesideItsFiring(MongoTarget target) {
        InterleavingExplorer.Report report = InterleavingExplorer.builder(target).name("recurring-occurrence")
                .workload(occurrence())
                .actor("second firer", db -> {
                    queueAtOccurrence(db).fireSchedules();
                    return List.of();
                })
                .actor("recoverer", db -> {
                    queueAtOccurrence(db).recover(Duration.ZERO);
                    return List.of();
                })
                .actor("worker", db -> {
                    queueAtOccurrence(db).processNext();
                    return List.of();
                })
                .actor("relayer", db -> {
                    queueAtOccurrence(db).relayOutbox(db.getCollection(JobQueueConfig.DEFAULT_SCHEDULES_COLLECTION),
                            Duration.ZERO);
                    return List.of();
                })
                .actor("starting process", db -> {
                    queueAtOccurrence(db).schedule(NAME, YEARLY, COUNT);
                    return List.of();
                })
                .actor("whole life elsewhere", db -> {
                    // another process fires the occurrence, runs it and, days later, prunes it: what is left for the
                    // paused firer to find is the schedule alone
                    JobQueue other = queueAtOccurrence(db);
                    other.fireSchedules();
                    other.processNext();
                    other.close();
                    pruner(db).prune();
                    return List.of();
                })
                .actor("pruner days ahead", db -> {
                    pruner(db).prune();
                    return List.of();
                })
                .build().explore();

        assertThat(report.schedules()).isGreaterThan(report.calls().size());
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }
    /** What a firing left in the schedule's outbox: nothing once it settled. */
    private static List<String> outboxLeftOn(Document schedule) {
        List<String> problems = new ArrayList<>();
        for (String field : List.of("jobOutbox", "jobOutboxReserved", "jobOutboxWritten")) {
            if (!schedule.getList(field, Object.class, List.of()).isEmpty()) {
                problems.add("the schedule still holds " + field + " " + schedule.get(field));
            }
        }
        return problems;
    }

    /** A queue the day before the occurrence: nothing of the schedule's own is due. */
    private static JobQueue queueBefore(MongoDatabase db) {
        return Friends.queue(db).serverClock(ServerClock.unsynchronized(Clock.fixed(due(db).minus(Duration.ofDays(1)),
                ZoneOffset.UTC))).build();
    }

    private static FriendsWorkload seeded() {
        return FriendsWorkload.on().seededBy(db -> {
            Friends.seedCounters(db, 1);
            JobQueue queue = Friends.queue(db).build();
            queue.ensureIndexes();
            Instant due = queue.schedule(NAME, YEARLY, COUNT).nextRun().orElseThrow();
            db.getCollection(CLOCK).insertOne(new Document("_id", NAME).append("due", Date.from(due)));
        });
    }

    /** An operator's trigger, then a worker: the triggered job runs once or never, nothing else runs. */
    static FriendsWorkload trigger() {
        return seeded().operation((db, ignored, random) -> {
            JobQueue queue = queueBefore(db);
            queue.operator().triggerSchedule(NAME);
            queue.processNext();
        }).recoveredBy(db -> queueBefore(db).recover(Duration.ZERO))
                .checkedBy(db -> onceOrNever(db, id -> id.toString().startsWith(NAME + "@")
                        && id.toString().endsWith("!"), false));
    }

    /** An operator's pause while the occurrence is due: it runs once or never, and nothing fires once paused. */
    static FriendsWorkload pause() {
        return seeded().operation((db, ignored, random) -> queueAtOccurrence(db).operator().pauseSchedule(NAME))
                .recoveredBy(db -> queueAtOccurrence(db).recover(Duration.ZERO))
                .checkedBy(db -> onceOrNever(db, id -> id.equals(RecurringJob.occurrenceId(NAME, due(db)).value())
                        || id.toString().endsWith("!"), true));
    }

    /**
     * Each effect witnessed by a job {@code expected} accepts, once at most, of one triggered job at most; every job
     * terminal; nothing left in the
     * schedule's outbox; a paused schedule (when {@code pausing}, it must be paused unless its pause never ran) has no
     * next run.
     */
    static List<String> onceOrNever(MongoDatabase db, java.util.function.Predicate<Object> expected,
                                    boolean pausing) {
        List<String> problems = new ArrayList<>(Friends.invariants(db));
        Document counter = db.getCollection(Friends.COUNTERS).find(eq("_id", "c0")).first();
        List<Object> witnessed = counter.getList(Friends.WITNESS, Object.class, List.of());
        if (witnessed.size() != witnessed.stream().distinct().count() || !witnessed.stream().allMatch(expected)
                || witnessed.stream().filter(id -> id.toString().endsWith("!")).count() > 1) {
            problems.add("ran as " + witnessed + ": each expected job once or never, one triggered at most");
        }
        Document schedule = db.getCollection(JobQueueConfig.DEFAULT_SCHEDULES_COLLECTION).find(eq("_id", NAME))
                .first();
        if (schedule == null) {
            problems.add("the schedule is gone");
            return problems;
        }
        if (Boolean.TRUE.equals(schedule.get("paused")) && schedule.containsKey("next")) {
            problems.add("paused, yet due again: " + schedule.toJson());
        }
        if (pausing && Boolean.TRUE.equals(schedule.get("paused")) && witnessed.isEmpty()
                && db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments() > 0) {
            problems.add("an occurrence was enqueued that never ran");
        }
        problems.addAll(outboxLeftOn(schedule));
        return problems;
    }

    @Test
    void shouldRunATriggeredJobOnceOrNeverWhenTheTriggerCrashesAtAnyWrite(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client).name("recurring-trigger")
                .workload(trigger()).recoveryFaults(true).build().explore();

        assertThat(report.sites()).extracting(s -> s.collection()).contains("jobSchedules", "jobs");
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldLeaveASchedulePausedOrAsItWasWhenThePauseCrashesAtAnyWrite(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client).name("recurring-pause")
                .workload(pause()).recoveryFaults(true).build().explore();

        assertThat(report.sites()).extracting(s -> s.collection()).contains("jobSchedules");
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldFireNothingAfterAPauseWhateverRunsBesideIt(MongoTarget target) {
        InterleavingExplorer.Report report = InterleavingExplorer.builder(target).name("recurring-pause")
                .workload(pause())
                .actor("firer", db -> {
                    queueAtOccurrence(db).fireSchedules();
                    return List.of();
                })
                .actor("recoverer", db -> {
                    queueAtOccurrence(db).recover(Duration.ZERO);
                    return List.of();
                })
                .actor("worker", db -> {
                    queueAtOccurrence(db).processNext();
                    return List.of();
                })
                .actor("second worker", db -> {
                    queueAtOccurrence(db).processNext();
                    return List.of();
                })
                .actor("trigger", db -> {
                    queueAtOccurrence(db).operator().triggerSchedule(NAME);
                    return List.of();
                })
                .build().explore();

        assertThat(report.violations()).as(report.toString()).isEmpty();
    }
}
