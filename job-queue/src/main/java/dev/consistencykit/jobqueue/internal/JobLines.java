package dev.consistencykit.jobqueue.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.lte;
import static dev.consistencykit.jobqueue.internal.JobSchema.LIMIT;
import static dev.consistencykit.jobqueue.internal.JobSchema.LINE;
import static dev.consistencykit.jobqueue.internal.JobSchema.LINE_KEY;
import static dev.consistencykit.jobqueue.internal.JobSchema.LINE_LIMIT;
import static dev.consistencykit.jobqueue.internal.JobSchema.LINE_NONCE;
import static dev.consistencykit.jobqueue.internal.JobSchema.ORDER_LINE;
import static dev.consistencykit.jobqueue.internal.JobSchema.RUN_AT;
import static dev.consistencykit.jobqueue.internal.JobSchema.STATE;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.MongoException;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.ForeignRecordException;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.MongoErrors;
import dev.consistencykit.core.spi.Passes;
import dev.consistencykit.core.spi.Transition;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.jobqueue.ConcurrencyLimit;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobState;
import dev.consistencykit.jobqueue.LineFullException;

/**
 * The lines of ordering and concurrency keys. A job with a key is recorded {@code AWAITING} (no worker claims it), then
 * joins its key's line, an array on the key's own document ({@code {j: job id, n: its line nonce}}), in the order jobs
 * arrive. Only jobs among the first {@code limit} entries of a line are ever let run ({@code AWAITING} to
 * {@code TODO}): 1 for an ordering key, the key's limit for a concurrency key. An entry leaves the line only once its
 * job ended: done or discarded, or, on a concurrency key, dead. So at any moment the jobs let run and not ended are
 * among the first {@code limit} entries: never more than {@code limit} run at once, and an ordering key's jobs run one
 * after the other in line order, whatever crashed. Moving a line on ({@link #advance}) reads the first entries' jobs
 * and acts on what it finds, so any process may do it any number of times.
 *
 * <p>On an ordering key a dead job stays at the head: the key is blocked (it alone) until an operator replays or
 * discards it. An entry whose job is gone or carries another line nonce (pruned, enqueued again under its id) is left
 * over from a job long ended, and leaves the line. A line holds only jobs in flight (and their leftovers), so it is
 * bounded by them; an empty line's document is deleted.
 */
final class JobLines implements JobHook {

    private static final Logger LOG = LoggerFactory.getLogger(JobLines.class);

    /** Times a single move takes ended entries off and looks again, before it leaves the rest to the next. */
    static final int MOVES = 100;
    /** Waiting jobs and quiet keys a recovery pass looks at, each. */
    static final int PER_PASS = 100;

    private final JobQueueConfig config;
    private final JobStore store;
    private final ServerClock clock;

    JobLines(JobQueueConfig config, JobStore store, ServerClock clock) {
        this.config = config;
        this.store = store;
        this.clock = clock;
    }

    /** A job recorded with a key waits ({@code AWAITING}) in its key's line: it joins the line. */
    @Override
    public void recorded(Object jobId, Document fields, Object lineNonce) {
        if (fields.get(LINE_KEY) instanceof String key) {
            join(key, fields.get(LINE_LIMIT), jobId, lineNonce);
        }
    }

    /**
     * A job of a key that ended (done, discarded; dead, which lets a concurrency key's next job run while an ordering
     * key stays blocked) moves its line on.
     */
    @Override
    public void ended(EndedJob ended) {
        if (ended.job().get(LINE_KEY) instanceof String key) {
            moveOn(ended.id(), key);
        }
    }

    /**
     * Puts job {@code jobId}, just recorded (or found recorded) with line nonce {@code nonce}, in line {@code key}
     * (whose limit becomes {@code limit}, for a concurrency key), then moves the line on: the job runs at once if its
     * turn has come.
     */
    void join(String key, Object limit, Object jobId, Object nonce) {
        if (!(nonce instanceof String n)) {
            throw new ConsistencyException(config.name(), jobId, "job " + Values.show(jobId) + " has a key but no"
                    + " line nonce this queue wrote");
        }
        Integer newLimit = limit instanceof Integer l ? l : null;
        for (int attempt = 1; ; attempt++) {
            try {
                config.retryPolicy().run(config.name(), jobId, "join line",
                        () -> store.joinLine(key, jobId, n, newLimit, config.maxKeyBacklog()));
                break;
            } catch (MongoException e) {
                // a duplicate key: the line's document holds the entry already (a retry of a join whose reply was
                // lost), or another writer created it between this upsert's look and its insert: push onto it
                if (!MongoErrors.isDuplicateKey(e)) {
                    throw e;
                }
                if (config.retryPolicy().execute(config.name(), key, "read line",
                        () -> store.lineHolding(key, List.of(n))).contains(n)) {
                    break;
                }
                if (config.retryPolicy().execute(config.name(), key, "read line",
                        () -> store.lineFull(key, config.maxKeyBacklog()))) {
                    refuse(key, jobId);
                }
                if (attempt >= 5) {
                    throw e;
                }
            }
        }
        advance(key);
    }


    /**
     * Refuses job {@code jobId}, recorded to wait in line {@code key}, which is full: the job is discarded with the
     * reason (it was never let run, so it has no effect to settle), then {@link LineFullException}.
     */
    private void refuse(String key, Object jobId) {
        String why = "the line of " + Values.show(key) + " holds " + config.maxKeyBacklog() + " jobs (maxKeyBacklog):"
                + " job " + Values.show(jobId) + " is refused and discarded; enqueue it again (under another id) once"
                + " the key's backlog has gone down";
        store.transition(jobId, "refuse", Transition.of(STATE, JobState.AWAITING.stored(),
                JobState.DISCARDED.stored()).alsoUpdating(Updates.combine(Updates.set(JobSchema.LAST_ERROR, why),
                Updates.currentDate(JobSchema.COMPLETED))));
        LOG.warn("[{}] {}", config.name(), why);
        throw new LineFullException(config.name(), jobId, why);
    }

    /**
     * Moves line {@code key} on: takes off the entries among its first {@code limit} whose jobs ended (done,
     * discarded, gone, another job's; dead too on a concurrency key) until none is left there, then lets the waiting
     * ones among them run; deletes the line's document once it is empty. Idempotent, safe from any number of processes
     * at once.
     *
     * @return whether the line still holds a job in flight
     */
    public boolean advance(String key) {
        boolean ordering = key.startsWith(ORDER_LINE);
        // the head alone: an ordering key's first entry, a concurrency key's first (at most its limit); never the
        // whole line, which grows with the key's backlog (2,000 waiting jobs: ~110 kB on each enqueue and completion)
        int most = ordering ? 1 : ConcurrencyLimit.MAX_LIMIT;
        for (int i = 0; i < MOVES; i++) {
            Document line = config.retryPolicy().execute(config.name(), key, "read line",
                    () -> store.lineHead(key, most));
            if (line == null) {
                return false;
            }
            List<Object> entries = line.getList(LINE, Object.class, List.of());
            if (entries.isEmpty()) {
                store.deleteEmptyLine(key);
                return false;
            }
            int limit = ordering || !(line.get(LIMIT) instanceof Integer n) || n < 1 ? 1
                    : Math.min(n, ConcurrencyLimit.MAX_LIMIT);
            List<Document> first = new ArrayList<>();
            for (Object entry : entries.subList(0, Math.min(limit, entries.size()))) {
                if (!(entry instanceof Document d) || d.get("j") == null || !(d.get("n") instanceof String)) {
                    throw new ForeignRecordException(config.name(), key, "the line " + Values.show(key) + " holds"
                            + " an entry this queue did not write: " + Values.show(entry), null);
                }
                first.add(d);
            }
            Map<Object, Document> jobs = new HashMap<>();
            for (Document job : config.retryPolicy().execute(config.name(), key, "read the first jobs of a line",
                    () -> store.linedJobs(first.stream().map(e -> e.get("j")).toList()))) {
                jobs.put(Ids.idKey(job.get("_id")), job);
            }
            List<Object> ended = new ArrayList<>();
            List<Document> waiting = new ArrayList<>();
            for (Document entry : first) {
                Document job = jobs.get(Ids.idKey(entry.get("j")));
                Object state = job == null ? null : job.get(STATE);
                boolean ours = job != null && entry.get("n").equals(job.get(LINE_NONCE));
                if (!ours || JobState.DONE.stored().equals(state) || JobState.DISCARDED.stored().equals(state)
                        || (!ordering && JobState.DEAD.stored().equals(state))) {
                    ended.add(entry.get("n"));
                } else if (JobState.AWAITING.stored().equals(state)) {
                    waiting.add(entry);
                }
            }
            if (!ended.isEmpty()) {
                store.leaveLine(key, ended);
                continue;   // others may now be among the first
            }
            for (Document entry : waiting) {
                store.endWait(entry.get("j"), entry.get("n"));
            }
            return true;
        }
        return true;
    }

    /** {@link #advance} after a job of line {@code key} ended; a failure is left to recovery, which moves it on. */
    private void moveOn(Object jobId, String key) {
        try {
            advance(key);
        } catch (ConsistencyException | MongoException e) {
            LOG.warn("[{}] job {} ended but moving the line {} on failed ({}); recovery will", config.name(),
                    Values.show(jobId), Values.show(key), e.toString());
        }
    }

    /**
     * Finishes what writers that died left: waiting jobs that joined no line (their enqueuer died between its two
     * writes) join it, and the lines nothing moved for {@code staleAfter} are moved on (the process that ended a job
     * of theirs died before it could).
     *
     */
    @Override
    public void recover(Duration staleAfter) {
        Date cutoff = clock.cutoff(staleAfter);
        Map<String, List<Document>> awaiting = new LinkedHashMap<>();
        // awaiting jobs, oldest first by the due index ({state, runAt}), by key
        for (Document job : config.retryPolicy().execute(config.name(), null, "find awaiting jobs",
                () -> store.find(and(eq(STATE, JobState.AWAITING.stored()), lte(RUN_AT, cutoff)),
                        Sorts.ascending(RUN_AT), 0, PER_PASS, LINE_KEY, LINE_LIMIT, LINE_NONCE))) {
            if (job.get(LINE_KEY) instanceof String key) {
                awaiting.computeIfAbsent(key, k -> new ArrayList<>()).add(job);
            }
        }
        Map<String, Boolean> moved = new LinkedHashMap<>();
        for (Map.Entry<String, List<Document>> e : awaiting.entrySet()) {
            String key = e.getKey();
            Passes.orLeftToNextPass(config.name(), "line " + Values.show(key), null, () -> {
                List<String> nonces = new ArrayList<>();
                e.getValue().forEach(job -> {
                    if (job.get(LINE_NONCE) instanceof String n) {
                        nonces.add(n);
                    }
                });
                Set<String> held = config.retryPolicy().execute(config.name(), key, "read line",
                        () -> store.lineHolding(key, nonces));
                boolean joined = false;
                for (Document job : e.getValue()) {
                    // one whose enqueuer died before it joined its line joins it now (the rest are in it already)
                    if (!(job.get(LINE_NONCE) instanceof String n) || !held.contains(n)) {
                        join(key, job.get(LINE_LIMIT), job.get("_id"), job.get(LINE_NONCE));
                        joined = true;
                    }
                }
                if (!joined) {
                    advance(key);
                }
                return null;
            });
            moved.put(key, true);
        }
        for (String key : store.linesBefore(cutoff, PER_PASS)) {
            if (!moved.containsKey(key)) {
                boolean inFlight = Passes.orLeftToNextPass(config.name(), "line " + Values.show(key), false,
                        () -> advance(key));
                if (inFlight) {
                    store.lookedAtLine(key);   // a running or dead head: the next passes look at other keys first
                }
                moved.put(key, true);
            }
        }
    }
}
