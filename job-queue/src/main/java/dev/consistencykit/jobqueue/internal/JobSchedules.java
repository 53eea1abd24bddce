package dev.consistencykit.jobqueue.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static dev.consistencykit.jobqueue.internal.JobSchema.COMPLETED;
import static dev.consistencykit.jobqueue.internal.JobSchema.CRON;
import static dev.consistencykit.jobqueue.internal.JobSchema.DELAY;
import static dev.consistencykit.jobqueue.internal.JobSchema.JOB;
import static dev.consistencykit.jobqueue.internal.JobSchema.KIND;
import static dev.consistencykit.jobqueue.internal.JobSchema.LAST_JOB;
import static dev.consistencykit.jobqueue.internal.JobSchema.LAST_MODIFIED;
import static dev.consistencykit.jobqueue.internal.JobSchema.LAST_RUN;
import static dev.consistencykit.jobqueue.internal.JobSchema.MAX_ATTEMPTS;
import static dev.consistencykit.jobqueue.internal.JobSchema.MISSED;
import static dev.consistencykit.jobqueue.internal.JobSchema.NEXT;
import static dev.consistencykit.jobqueue.internal.JobSchema.PAUSED;
import static dev.consistencykit.jobqueue.internal.JobSchema.PAYLOAD;
import static dev.consistencykit.jobqueue.internal.JobSchema.PRIORITY;
import static dev.consistencykit.jobqueue.internal.JobSchema.REMOVED;
import static dev.consistencykit.jobqueue.internal.JobSchema.REVISION;
import static dev.consistencykit.jobqueue.internal.JobSchema.STATE;
import static dev.consistencykit.jobqueue.internal.JobSchema.TRIGGERED;
import static dev.consistencykit.jobqueue.internal.JobSchema.TYPE;
import static dev.consistencykit.jobqueue.internal.JobSchema.ZONE;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Optional;

import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.bson.types.ObjectId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.client.model.Updates;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.ForeignRecordException;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.LeaseLostException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.Passes;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.jobqueue.JobState;
import dev.consistencykit.jobqueue.RecurringJob;
import dev.consistencykit.jobqueue.Schedule;

/**
 * Recurring jobs: a schedule is one document of the schedules collection, and each occurrence is fired by an outbox
 * write on it ({@link JobOutbox#enqueueWith}) that moves the schedule to its next occurrence and records the
 * occurrence's job, {@code <name>@<time>}, in the same atomic write, guarded by the schedule's revision and the
 * occurrence's time. So any number of processes may fire a schedule: the first write for an occurrence moves the
 * schedule on, and every other one, however late, finds the guard false and writes nothing; an occurrence whose firer
 * died after its write is relayed like any outboxed job, and one whose firer died before it is fired by the next
 * process that looks. The guard is the schedule itself, which only moves forward: nothing a pruner removes.
 */
public final class JobSchedules implements JobHook {

    private static final Logger LOG = LoggerFactory.getLogger(JobSchedules.class);

    /** Due schedules a pass fires at most. */
    static final int DUE_PER_PASS = 100;
    /** Occurrences of one schedule a pass fires at most (a catch-up of {@link Schedule.MissedRuns#EACH}). */
    static final int OCCURRENCES_PER_PASS = 100;
    /** Removed schedules a pass deletes at most. */
    static final int REMOVED_PER_PASS = 100;
    /** The longest a fixed-delay schedule waits before it looks again whether its last run ended. */
    static final Duration LONGEST_RECHECK = Duration.ofMinutes(1);
    /** On a schedule's job: the keys its occurrences carry (a concurrency key of 1: occurrences never overlap). */
    private static final String ORDERING_KEY = "orderingKey";
    private static final String CONCURRENCY_KEY = "concurrencyKey";
    private static final String CONCURRENCY_LIMIT = "concurrencyLimit";
    /** The longest schedule name, in characters. */
    public static final int MAX_NAME_LENGTH = 200;

    private final JobQueueConfig config;
    private final JobStore store;
    private final JobRecording recording;
    private final JobOutbox outbox;
    private final ServerClock clock;

    /** The schedules, through the store; each occurrence is written by the outbox and checked by the recording. */
    JobSchedules(JobQueueConfig config, JobStore store, JobRecording recording, JobOutbox outbox, ServerClock clock) {
        this.config = config;
        this.store = store;
        this.recording = recording;
        this.outbox = outbox;
        this.clock = clock;
    }

    /** A schedule as stored, read back: input again, checked like any other. */
    private record Stored(String name, Object revision, Schedule schedule, JobRequest job, Date next, Date lastRun,
                          Object lastJob, boolean paused) {

        RecurringJob view() {
            return new RecurringJob(name, schedule, job.type(), Optional.ofNullable(next).map(Date::toInstant),
                    Optional.ofNullable(lastRun).map(Date::toInstant), Optional.ofNullable(lastJob)
                    .map(OperationId::new), paused);
        }
    }

    // ---------------------------------------------------------------- defining

    /**
     * Registers schedule {@code name}, or changes it: a definition equal to the stored one writes nothing; another
     * replaces it under a new revision, so that a firing of the old definition in flight is refused.
     */
    public RecurringJob define(String name, Schedule schedule, JobRequest template) {
        checkName(name);
        if (!template.delay().isZero()) {
            throw new InvalidInputException(config.name(), "template.delay", "a recurring job's occurrences are due"
                    + " when its schedule says: the template must have no delay, had " + template.delay());
        }
        if (template.dedupeKey().isPresent()) {
            throw new InvalidInputException(config.name(), "template.dedupeKey", "each occurrence of a recurring job"
                    + " is its own job: the template must have no dedupe key");
        }
        EncodedJob encoded = recording.encode(template.withId(RecurringJob.occurrenceId(name, Instant.EPOCH)));
        Document job = new Document(TYPE, template.type()).append(PAYLOAD, encoded.fields().get(PAYLOAD))
                .append(PRIORITY, template.priority());
        template.maxAttempts().ifPresent(n -> job.append(MAX_ATTEMPTS, n));
        template.orderingKey().ifPresent(k -> job.append(ORDERING_KEY, k));
        template.concurrency().ifPresent(c -> job.append(CONCURRENCY_KEY, c.key()).append(CONCURRENCY_LIMIT,
                c.limit()));
        Document definition = definition(schedule).append(JOB, job);
        for (int round = 0; ; round++) {
            Document existing = config.retryPolicy().execute(config.name(), name, "read schedule",
                    () -> store.schedule(name));
            if (existing != null && !existing.containsKey(REMOVED) && sameDefinition(existing, definition)) {
                return read(existing).view();
            }
            Instant now = clock.now();
            Instant first = schedule.expression().isPresent() ? schedule.nextAfter(now).orElseThrow(
                    () -> new InvalidInputException(config.name(), "schedule", schedule + " names no time after "
                            + now)) : now;
            // a paused schedule stays paused when its definition changes (every process registers its schedules at
            // start); one removed and defined again starts afresh
            boolean paused = existing != null && !existing.containsKey(REMOVED) && Boolean.TRUE.equals(
                    existing.get(PAUSED));
            Bson update = Updates.combine(Updates.set(REVISION, new ObjectId()), paused ? Updates.unset(NEXT)
                    : Updates.set(NEXT, Date.from(first)), paused ? new Document() : Updates.unset(PAUSED),
                    Updates.unset(REMOVED), Updates.set(KIND, definition.get(KIND)), Updates.set(JOB, job),
                    setOrUnset(CRON, definition.get(CRON)), setOrUnset(ZONE, definition.get(ZONE)),
                    setOrUnset(MISSED, definition.get(MISSED)), setOrUnset(DELAY, definition.get(DELAY)));
            Object revision = existing == null ? null : existing.get(REVISION);
            if (config.retryPolicy().execute(config.name(), name, "define schedule",
                    () -> store.defineSchedule(name, revision, update))) {
                Document defined = config.retryPolicy().execute(config.name(), name, "read schedule",
                        () -> store.schedule(name));
                if (defined != null) {
                    return read(defined).view();
                }
            }
            if (round >= 5) {
                throw new ConsistencyException(config.name(), name, "schedule '" + name + "' changed under every one"
                        + " of 6 attempts to define it");
            }
        }
    }

    private static Bson setOrUnset(String field, Object value) {
        return value == null ? Updates.unset(field) : Updates.set(field, value);
    }

    private static Document definition(Schedule schedule) {
        Document d = new Document();
        if (schedule.expression().isPresent()) {
            d.append(KIND, "cron").append(CRON, schedule.expression().get())
                    .append(ZONE, schedule.zone().orElseThrow().getId())
                    .append(MISSED, schedule.missed().orElseThrow().name());
        } else {
            d.append(KIND, "fixedDelay").append(DELAY, schedule.delay().orElseThrow().toMillis());
        }
        return d;
    }

    private boolean sameDefinition(Document existing, Document definition) {
        Document stored = new Document();
        for (String field : List.of(KIND, CRON, ZONE, MISSED, DELAY, JOB)) {
            if (existing.containsKey(field)) {
                stored.append(field, existing.get(field));
            }
        }
        return stored.toBsonDocument(BsonDocument.class, store.codecs())
                .equals(definition.toBsonDocument(BsonDocument.class, store.codecs()));
    }

    private void checkName(String name) {
        if (name == null || name.isBlank() || name.length() > MAX_NAME_LENGTH) {
            throw new InvalidInputException(config.name(), "name", "a schedule's name has 1 to " + MAX_NAME_LENGTH
                    + " characters, not all blank, was " + (name == null ? "null" : Values.show(name)));
        }
        Ids.operationId(config.name(), "name", name);
    }

    /**
     * Removes schedule {@code name}: no occurrence fires after this returns (the removal changes the revision every
     * firing is guarded by); an occurrence already fired runs. The document goes once nothing holds it.
     *
     * @return whether there was such a schedule
     */
    public boolean remove(String name) {
        checkName(name);
        for (int round = 0; ; round++) {
            Document existing = config.retryPolicy().execute(config.name(), name, "read schedule",
                    () -> store.schedule(name));
            if (existing == null || existing.containsKey(REMOVED)) {
                // none, or removed already: by this call's earlier round only if there was one
                return existing != null && round > 0;
            }
            Object revision = existing.get(REVISION);
            if (revision != null && config.retryPolicy().execute(config.name(), name, "remove schedule",
                    () -> store.defineSchedule(name, revision, Updates.combine(Updates.set(REMOVED, true),
                            Updates.set(REVISION, new ObjectId()), Updates.unset(NEXT))))) {
                deleteRemoved(name);
                return true;
            }
            if (revision == null || round >= 5) {
                throw new ForeignRecordException(config.name(), name, "schedule '" + name + "' has no revision this"
                        + " queue wrote, or changed under every attempt to remove it", null);
            }
        }
    }

    // ---------------------------------------------------------------- an operator's control

    /**
     * Pauses schedule {@code name}: no occurrence fires after this returns (the pause changes the revision every firing
     * is guarded by, and takes the next run away); one already fired runs. Pausing a paused schedule writes nothing.
     *
     * @return whether there was such a schedule
     */
    public boolean pause(String name) {
        return control(name, "pause", existing -> Boolean.TRUE.equals(existing.get(PAUSED)) ? null
                : Updates.combine(Updates.set(PAUSED, true), Updates.unset(NEXT)));
    }

    /**
     * Resumes schedule {@code name}: a cron schedule's next run is its first occurrence after now (those that fell
     * while it was paused are skipped), a fixed delay's is now (its delay counted from the last run's end, as ever).
     * Resuming a schedule that is not paused writes nothing.
     *
     * @return whether there was such a schedule
     */
    public boolean resume(String name) {
        return control(name, "resume", existing -> {
            if (!Boolean.TRUE.equals(existing.get(PAUSED))) {
                return null;
            }
            Schedule schedule = read(existing).schedule();
            Instant now = clock.now();
            Optional<Instant> next = schedule.expression().isPresent() ? schedule.nextAfter(now) : Optional.of(now);
            return Updates.combine(Updates.unset(PAUSED), next.isPresent() ? Updates.set(NEXT,
                    Date.from(next.get())) : Updates.unset(NEXT));
        });
    }

    /**
     * One change of an operator's on schedule {@code name} ({@code change} gives the update for the schedule as read,
     * or null when it is in that state already), under a new revision and guarded by the one read: retried while
     * something else changes the schedule meanwhile.
     */
    private boolean control(String name, String what, java.util.function.Function<Document, Bson> change) {
        checkName(name);
        for (int round = 0; ; round++) {
            Document existing = config.retryPolicy().execute(config.name(), name, "read schedule",
                    () -> store.schedule(name));
            if (existing == null || existing.containsKey(REMOVED)) {
                return false;
            }
            Bson update = change.apply(existing);
            if (update == null) {
                return true;
            }
            Object revision = existing.get(REVISION);
            if (revision != null && config.retryPolicy().execute(config.name(), name, what + " schedule",
                    () -> store.defineSchedule(name, revision, Updates.combine(update,
                            Updates.set(REVISION, new ObjectId()))))) {
                LOG.info("[{}] schedule {}: {}d", config.name(), Values.show(name), what);
                return true;
            }
            if (revision == null || round >= 5) {
                throw new ForeignRecordException(config.name(), name, "schedule '" + name + "' has no revision this"
                        + " queue wrote, or changed under every attempt to " + what + " it", null);
            }
        }
    }

    /**
     * Enqueues one extra run of schedule {@code name} now, paused or not, exactly once for this call however its
     * requests are retried: a job like its occurrences' with id {@link RecurringJob#triggeredId}, written by an outbox
     * write on the schedule guarded by its revision. The schedule's own occurrences are not moved.
     *
     * @return the job's id; empty if there is no such schedule
     */
    public Optional<OperationId> trigger(String name) {
        checkName(name);
        Instant now = clock.now();
        OperationId jobId = RecurringJob.triggeredId(name, now);
        for (int round = 0; ; round++) {
            Document existing = config.retryPolicy().execute(config.name(), name, "read schedule",
                    () -> store.schedule(name));
            if (existing == null || existing.containsKey(REMOVED)) {
                return Optional.empty();
            }
            Stored s = read(existing);
            JobOutbox.Fired fired = outbox.fireWith(store.schedules(), name, eq(REVISION, s.revision()),
                    Updates.set(TRIGGERED, Date.from(now)), recording.encode(s.job().withId(jobId)));
            if (fired != JobOutbox.Fired.NOT_WRITTEN) {
                return Optional.of(jobId);   // written now, or by this call's earlier request (taken)
            }
            if (round >= 5) {
                throw new ConsistencyException(config.name(), name, "schedule '" + name + "' changed under every one"
                        + " of 6 attempts to trigger it; nothing was enqueued");
            }
        }
    }

    private void deleteRemoved(Object id) {
        outbox.relay(store.schedules(), id);
        if (!store.deleteRemovedSchedule(id)) {
            LOG.info("[{}] removed schedule {} kept until the firing that holds it gives it back", config.name(),
                    Values.show(id));
        }
    }

    // ---------------------------------------------------------------- reading

    /** Schedule {@code name}, if registered. */
    public Optional<RecurringJob> get(String name) {
        checkName(name);
        Document d = config.retryPolicy().execute(config.name(), name, "read schedule", () -> store.schedule(name));
        return d == null || d.containsKey(REMOVED) ? Optional.empty() : Optional.of(read(d).view());
    }

    /** The schedules by name, after {@code skip}, at most {@code limit}; one that something else rewrote is left out. */
    public List<RecurringJob> list(int skip, int limit) {
        List<RecurringJob> out = new ArrayList<>();
        for (Document d : config.retryPolicy().execute(config.name(), null, "list schedules",
                () -> store.schedules(skip, limit))) {
            RecurringJob view = Passes.orLeftToNextPass(config.name(), "schedule " + Values.show(d.get("_id")), null,
                    () -> read(d).view());
            if (view != null) {
                out.add(view);
            }
        }
        return out;
    }

    private Stored read(Document d) {
        Object id = d.get("_id");
        try {
            if (!(id instanceof String name) || !(d.get(KIND) instanceof String kind)
                    || !(d.get(JOB) instanceof Document job) || !(job.get(TYPE) instanceof String type)
                    || !(job.get(PAYLOAD) instanceof Document payload) || !(job.get(PRIORITY) instanceof Integer p)) {
                throw foreign(id, "it lacks a name, a kind or a job of the shapes this queue writes", null);
            }
            Schedule schedule;
            if (kind.equals("cron") && d.get(CRON) instanceof String cron && d.get(ZONE) instanceof String zone
                    && d.get(MISSED) instanceof String missed) {
                schedule = Schedule.cron(cron, ZoneId.of(zone)).missedRuns(Schedule.MissedRuns.valueOf(missed));
            } else if (kind.equals("fixedDelay") && d.get(DELAY) instanceof Long delay) {
                schedule = Schedule.fixedDelay(Duration.ofMillis(delay));
            } else {
                throw foreign(id, "its kind " + Values.show(kind) + " comes without the fields this queue writes", null);
            }
            JobRequest request = JobRequest.of(type, payload).withPriority(p);
            if (job.get(ORDERING_KEY) instanceof String key) {
                request = request.withOrderingKey(key);
            }
            if (job.get(CONCURRENCY_KEY) instanceof String key && job.get(CONCURRENCY_LIMIT) instanceof Integer n) {
                request = request.withConcurrencyKey(key, n);
            }
            if (job.containsKey(MAX_ATTEMPTS)) {
                if (!(job.get(MAX_ATTEMPTS) instanceof Integer n)) {
                    throw foreign(id, "its job's maxAttempts is not an integer", null);
                }
                request = request.withMaxAttempts(n);
            }
            return new Stored(name, d.get(REVISION), schedule, request, date(id, d, NEXT), date(id, d, LAST_RUN),
                    d.get(LAST_JOB), Boolean.TRUE.equals(d.get(PAUSED)));
        } catch (IllegalArgumentException | IllegalStateException | DateTimeException e) {
            throw foreign(id, e.getMessage(), e);
        }
    }

    private Date date(Object id, Document d, String field) {
        Object value = d.get(field);
        if (value != null && !(value instanceof Date)) {
            throw foreign(id, field + " is not a date", null);
        }
        return (Date) value;
    }

    private ForeignRecordException foreign(Object id, String why, Throwable cause) {
        return new ForeignRecordException(config.name(), id, "schedule " + Values.show(id) + " is not one this queue"
                + " wrote: " + why, cause);
    }

    // ---------------------------------------------------------------- firing

    /**
     * Fires every due occurrence (at most {@value #DUE_PER_PASS} schedules, {@value #OCCURRENCES_PER_PASS} occurrences
     * each): what every worker pool runs beside its claims. One round trip when nothing is due.
     *
     * @return the occurrences this pass fired
     */
    public int fireDue() {
        Instant now = clock.now();
        int fired = 0;
        for (Document due : store.dueSchedules(Date.from(now), DUE_PER_PASS)) {
            fired += Passes.orLeftToNextPass(config.name(), "schedule " + Values.show(due.get("_id")), 0,
                    () -> fire(read(due), now));
        }
        return fired;
    }

    /**
     * Finishes what firers and removers that died left: relays the occurrences their writes outboxed, fires what is
     * due, and deletes removed schedules nothing holds any more.
     */
    @Override
    public void recover(Duration staleAfter) {
        outbox.relayAll(store.schedules(), staleAfter);
        fireDue();
        for (Object removed : store.removedSchedules(REMOVED_PER_PASS)) {
            Passes.orLeftToNextPass(config.name(), "removed schedule " + Values.show(removed), null, () -> {
                deleteRemoved(removed);
                return null;
            });
        }
    }

    /** Fires schedule {@code s}'s occurrences due by {@code now}; how many this call fired. */
    private int fire(Stored s, Instant now) {
        Date next = s.next();
        int fired = 0;
        for (int i = 0; i < OCCURRENCES_PER_PASS && next != null && !next.toInstant().isAfter(now); i++) {
            Instant t = next.toInstant();
            Schedule schedule = s.schedule();
            Instant following;
            if (schedule.expression().isEmpty()) {
                Optional<Instant> wait = untilLastRunEnded(s, t, now);
                if (wait.isPresent()) {
                    store.moveSchedule("postpone schedule", s.name(), s.revision(), next, Updates.set(NEXT,
                            Date.from(wait.get())));
                    return fired;
                }
                // looked at again after a while, by then its job may have ended
                following = now.plus(recheck(schedule));
            } else {
                Optional<Instant> after = schedule.nextAfter(t);
                Schedule.MissedRuns missed = schedule.missed().orElseThrow();
                if (missed == Schedule.MissedRuns.SKIP && after.isPresent() && !after.get().isAfter(now)) {
                    Optional<Instant> resume = schedule.nextAfter(now);
                    store.moveSchedule("skip missed occurrences", s.name(), s.revision(), next, resume.isPresent()
                            ? Updates.set(NEXT, Date.from(resume.get())) : Updates.unset(NEXT));
                    return fired;
                }
                following = (missed == Schedule.MissedRuns.ONCE ? schedule.nextAfter(now) : after).orElse(null);
            }
            OperationId jobId = RecurringJob.occurrenceId(s.name(), t);
            Bson move = Updates.combine(following == null ? Updates.unset(NEXT) : Updates.set(NEXT,
                    Date.from(following)), Updates.set(LAST_RUN, next), Updates.set(LAST_JOB, jobId.value()));
            JobOutbox.Fired written;
            try {
                written = outbox.fireWith(store.schedules(), s.name(), and(eq(REVISION, s.revision()),
                        eq(NEXT, next)), move, recording.encode(s.job().withId(jobId)));
            } catch (LeaseLostException paused) {
                LOG.info("[{}] occurrence {} left to the next pass: {}", config.name(), jobId, paused.getMessage());
                return fired;
            }
            if (written == JobOutbox.Fired.TAKEN) {
                // the occurrence's id is a job's already: fired by an earlier definition of this schedule (changed, or
                // removed and defined again, by a process whose clock is a little behind), or before this process's
                // clock stepped back. That job is this occurrence; the schedule moves on past it, or it would fire
                // the taken id on every pass until the job is pruned
                if (!store.moveSchedule("move past a taken occurrence", s.name(), s.revision(), next, move)) {
                    return fired;   // another process moved it on
                }
                LOG.info("[{}] occurrence {} of schedule {} was enqueued already (by an earlier definition or an"
                        + " earlier clock): the schedule moves on to {}", config.name(), Values.show(jobId.value()),
                        Values.show(s.name()), following);
                next = following == null ? null : Date.from(following);
                continue;
            }
            if (written == JobOutbox.Fired.NOT_WRITTEN) {
                return fired;   // another process moved the schedule on (fired it, or the schedule changed)
            }
            fired++;
            next = following == null ? null : Date.from(following);
        }
        return fired;
    }

    private static Duration recheck(Schedule schedule) {
        Duration delay = schedule.delay().orElseThrow();
        return delay.compareTo(LONGEST_RECHECK) < 0 ? delay : LONGEST_RECHECK;
    }

    /**
     * For a fixed delay: when the occurrence due at {@code t} may fire, if not now: a delay after its last run ended,
     * or a while from now if it is still running.
     */
    private Optional<Instant> untilLastRunEnded(Stored s, Instant t, Instant now) {
        if (s.lastJob() == null) {
            return Optional.empty();
        }
        Document job = config.retryPolicy().execute(config.name(), s.lastJob(), "read last run",
                () -> store.readPrimary(s.lastJob()));
        if (job != null && !ended(job.get(STATE))) {
            Instant later = now.plus(recheck(s.schedule()));
            return Optional.of(later);
        }
        Instant ended = job == null ? t : job.get(COMPLETED) instanceof Date d ? d.toInstant()
                : job.get(LAST_MODIFIED) instanceof Date d ? d.toInstant() : t;
        Instant due = ended.plus(s.schedule().delay().orElseThrow());
        return due.isAfter(now) ? Optional.of(due) : Optional.empty();
    }

    private static boolean ended(Object state) {
        for (JobState s : JobState.values()) {
            if (s.stored().equals(state)) {
                return s.isTerminal();
            }
        }
        return false;
    }
}
