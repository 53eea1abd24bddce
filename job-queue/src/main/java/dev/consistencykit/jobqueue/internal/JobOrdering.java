package dev.consistencykit.jobqueue.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.lte;
import static dev.consistencykit.jobqueue.internal.JobSchema.LINE;
import static dev.consistencykit.jobqueue.internal.JobSchema.ORDER_KEY;
import static dev.consistencykit.jobqueue.internal.JobSchema.ORDER_NONCE;
import static dev.consistencykit.jobqueue.internal.JobSchema.RUN_AT;
import static dev.consistencykit.jobqueue.internal.JobSchema.STATE;

import java.time.Duration;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.MongoException;
import com.mongodb.client.model.Sorts;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.MongoErrors;
import dev.consistencykit.core.spi.Passes;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobState;

/**
 * Ordering keys: the jobs with one key run one at a time, in the order they joined the key's line. A job with a key
 * is recorded {@code WAITING} (no worker claims it), then joins the line, an array on the key's own document
 * ({@code {j: job id, n: its order nonce}}); only the job at the head of the line is ever let run ({@code WAITING}
 * to {@code TODO}), and the head leaves the line only once its job is done or discarded. So a second job of a key
 * runs only after the first ended, whatever crashed: moving the line on ({@link #advance}) reads the head's job and
 * acts on what it finds, and any process may do it any number of times.
 *
 * <p>A job that died dead stays at the head: its key is blocked (its alone) until an operator replays or discards
 * it. An entry whose job is gone or carries another order nonce (pruned, enqueued again under its id) is left over
 * from a job long ended, and leaves the line. The line holds only jobs in flight (and their leftovers), so it is
 * bounded by them; an empty line's document is deleted.
 */
public final class JobOrdering {

    private static final Logger LOG = LoggerFactory.getLogger(JobOrdering.class);

    /** Heads a single move of the line takes off at most, before it leaves the rest to the next. */
    static final int HEADS_PER_MOVE = 100;
    /** Waiting jobs and quiet keys a recovery pass looks at, each. */
    static final int PER_PASS = 100;

    private final JobQueueConfig config;
    private final JobStore store;
    private final ServerClock clock;

    JobOrdering(JobQueueConfig config, JobStore store, ServerClock clock) {
        this.config = config;
        this.store = store;
        this.clock = clock;
    }

    /**
     * Puts job {@code jobId}, just recorded (or found recorded) with order nonce {@code nonce}, in key {@code key}'s
     * line, then moves the line on: it runs at once if it heads it.
     */
    void join(String key, Object jobId, Object nonce) {
        if (!(nonce instanceof String n)) {
            throw new ConsistencyException(config.name(), jobId, "job " + Values.show(jobId) + " has an ordering key"
                    + " but no order nonce this queue wrote");
        }
        config.retryPolicy().run(config.name(), jobId, "join line", () -> {
            try {
                store.joinLine(key, jobId, n);
            } catch (MongoException e) {
                // the key's document was created meanwhile (the next attempt pushes onto it), or it holds the entry
                if (!MongoErrors.isDuplicateKey(e)) {
                    throw e;
                }
                Document line = store.line(key);
                if (line == null || !holds(line, n)) {
                    throw e;   // transient: retried
                }
            }
        });
        advance(key);
    }

    private static boolean holds(Document line, String nonce) {
        for (Object entry : line.getList(LINE, Object.class, List.of())) {
            if (entry instanceof Document d && nonce.equals(d.get("n"))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Moves key {@code key}'s line on: takes off its head while that head's job is done, discarded, gone or another
     * job's, then lets the new head run if it waits; deletes the line's document once it is empty. Idempotent, safe
     * from any number of processes at once.
     *
     * @return whether the line's head is a job in flight (running, waiting its turn to be claimed, or dead)
     */
    public boolean advance(String key) {
        for (int i = 0; i < HEADS_PER_MOVE; i++) {
            Document line = config.retryPolicy().execute(config.name(), key, "read line", () -> store.line(key));
            if (line == null) {
                return false;
            }
            List<Object> entries = line.getList(LINE, Object.class, List.of());
            if (entries.isEmpty()) {
                store.deleteEmptyLine(key);
                return false;
            }
            if (!(entries.get(0) instanceof Document head) || head.get("j") == null) {
                throw new dev.consistencykit.core.ForeignRecordException(config.name(), key, "the line of ordering"
                        + " key " + Values.show(key) + " holds an entry this queue did not write: " + entries.get(0),
                        null);
            }
            Object jobId = head.get("j");
            Object nonce = head.get("n");
            Document job = config.retryPolicy().execute(config.name(), jobId, "read head of line",
                    () -> store.readPrimary(jobId));
            Object state = job == null ? null : job.get(STATE);
            boolean ours = job != null && nonce != null && nonce.equals(job.get(ORDER_NONCE));
            if (!ours || JobState.DONE.stored().equals(state) || JobState.DISCARDED.stored().equals(state)) {
                store.leaveLine(key, jobId, nonce);
                continue;
            }
            if (JobState.WAITING.stored().equals(state)) {
                store.endWait(jobId, nonce);
            }
            return true;
        }
        return true;
    }

    /** {@link #advance} after a job of {@code key} ended; a failure is left to recovery, which moves it on later. */
    void ended(Object jobId, String key) {
        try {
            advance(key);
        } catch (ConsistencyException | MongoException e) {
            LOG.warn("[{}] job {} ended but moving the line of its ordering key {} on failed ({}); recovery will",
                    config.name(), Values.show(jobId), Values.show(key), e.toString());
        }
    }

    /**
     * Finishes what writers that died left: waiting jobs that joined no line (their enqueuer died between its two
     * writes) join it, and the lines nothing moved for {@code staleAfter} are moved on (their head's worker, or the
     * process that ended it, died before it could).
     *
     * @return the keys it moved on
     */
    public int recover(Duration staleAfter) {
        Date cutoff = clock.cutoff(staleAfter);
        Map<String, Boolean> moved = new LinkedHashMap<>();
        // waiting jobs, oldest first by the due index ({state, runAt}): each joins its key's line if it has not
        for (Document job : config.retryPolicy().execute(config.name(), null, "find waiting jobs",
                () -> store.find(and(eq(STATE, JobState.WAITING.stored()), lte(RUN_AT, cutoff)),
                        Sorts.ascending(RUN_AT), 0, PER_PASS, ORDER_KEY, ORDER_NONCE))) {
            if (job.get(ORDER_KEY) instanceof String key && !moved.containsKey(key)) {
                Passes.orLeftToNextPass(config.name(), "waiting job " + Values.show(job.get("_id")), null, () -> {
                    join(key, job.get("_id"), job.get(ORDER_NONCE));
                    return null;
                });
                moved.put(key, true);
            }
        }
        for (String key : store.linesBefore(cutoff, PER_PASS)) {
            if (!moved.containsKey(key)) {
                boolean inFlight = Passes.orLeftToNextPass(config.name(), "ordering key " + Values.show(key), false,
                        () -> advance(key));
                if (inFlight) {
                    store.lookedAtLine(key);   // a running or dead head: the next passes look at other keys first
                }
                moved.put(key, true);
            }
        }
        return moved.size();
    }
}
