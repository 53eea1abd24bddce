package dev.consistencykit.jobqueue.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.lte;
import static dev.consistencykit.jobqueue.internal.JobSchema.CHUNKS;
import static dev.consistencykit.jobqueue.internal.JobSchema.HEAD_CHUNK;
import static dev.consistencykit.jobqueue.internal.JobSchema.LIMIT;
import static dev.consistencykit.jobqueue.internal.JobSchema.LINE;
import static dev.consistencykit.jobqueue.internal.JobSchema.LINE_KEY;
import static dev.consistencykit.jobqueue.internal.JobSchema.LINE_LIMIT;
import static dev.consistencykit.jobqueue.internal.JobSchema.LINE_ID;
import static dev.consistencykit.jobqueue.internal.JobSchema.LINE_NONCE;
import static dev.consistencykit.jobqueue.internal.JobSchema.NEXT_CHUNK;
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
 * joins its key's line ({@code {j: job id, n: its line nonce}}), in the order jobs arrive. Only jobs among the first
 * {@code limit} entries of a line are ever let run ({@code AWAITING} to {@code TODO}): 1 for an ordering key, the key's
 * limit for a concurrency key. An entry leaves the line only once its job ended: done or discarded, or, on a
 * concurrency key, dead. So at any moment the jobs let run and not ended are among the first {@code limit} entries:
 * never more than {@code limit} run at once, and an ordering key's jobs run one after the other in line order, whatever
 * crashed. Moving a line on ({@link #advance}) reads the first entries' jobs and acts on what it finds, so any process
 * may do it any number of times.
 *
 * <p>A line is kept in documents of at most a chunk of entries ({@link LineShape}), so that its cost does not grow with
 * the key's backlog: a join pushes onto the key's document, which holds the newest entries; when that is full, a join
 * first moves them into a chunk, a document of their own numbered after the line's last ({@code nextChunk}), written
 * before the key's document lets them go and counts it, so an entry is always in one of them (for a moment in both).
 * The line is its chunks from {@code headChunk}, oldest first, then the key's document; a chunk emptied at the head is
 * deleted and the head moves past it. A chunk's id carries its number and its line's id, and numbers only grow, so a
 * chunk a paused process writes late is one no line reads (behind the head, or of a line since deleted): the writer
 * deletes it, or recovery does.
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

    /** Times a join tries again, each time after another writer moved first or it made room itself. */
    static final int JOIN_ATTEMPTS = 10;

    private final JobQueueConfig config;
    private final JobStore store;
    private final ServerClock clock;
    private final LineShape shape;

    JobLines(JobQueueConfig config, JobStore store, ServerClock clock) {
        this.config = config;
        this.store = store;
        this.clock = clock;
        this.shape = LineShape.holding(config.maxKeyBacklog());
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
     * (whose limit becomes {@code limit}, for a concurrency key), moving the key's entries into a chunk first when its
     * document is full, then moves the line on: the job runs at once if its turn has come.
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
                        () -> store.joinLine(key, jobId, n, newLimit, shape, Date.from(clock.now())));
                break;
            } catch (MongoException e) {
                // a duplicate key: the key's document holds the entry already (a retry of a join whose reply was
                // lost), another writer created it between this upsert's look and its insert, or it is full
                if (!MongoErrors.isDuplicateKey(e)) {
                    throw e;
                }
                if (config.retryPolicy().execute(config.name(), key, "read line",
                        () -> store.lineHolding(key, List.of(n))).contains(n)) {
                    break;
                }
                Document tail = config.retryPolicy().execute(config.name(), key, "read line",
                        () -> store.lineTail(key));
                if (tail != null && full(tail)) {
                    if (!(tail.get(CHUNKS) instanceof Integer chunks) || chunks >= shape.maxChunks()) {
                        refuse(key, jobId);
                    }
                    roll(key, tail);
                }
                if (attempt >= JOIN_ATTEMPTS) {
                    throw e;
                }
            }
        }
        move(key, true);
    }

    /** Whether the key's document {@code tail} holds all the entries it may. */
    private boolean full(Document tail) {
        int room = tail.get(CHUNKS) instanceof Integer chunks && chunks < shape.maxChunks() ? shape.chunk()
                : shape.lastChunk();
        return tail.getList(LINE, Object.class, List.of()).size() >= room;
    }

    /**
     * Moves the entries of the key's document {@code tail} (as read) into the line's next chunk: writes the chunk,
     * unless one of that number exists (written by another join, or by one that died before the next write), then lets
     * the key's document give up the chunk's entries and count it, if the chunk is still its next. A chunk this call
     * wrote that no line reads (the line moved past it, or was deleted, while this call paused) is deleted again.
     */
    private void roll(String key, Document tail) {
        if (!(tail.get(NEXT_CHUNK) instanceof Integer number) || tail.get(LINE_ID) == null) {
            throw new ForeignRecordException(config.name(), key, "the line " + Values.show(key) + " has no chunk"
                    + " numbers this queue wrote: " + Values.show(tail), null);
        }
        Object lineId = tail.get(LINE_ID);
        Document id = JobStore.chunkId(key, lineId, number);
        List<Document> entries = entries(key, tail.getList(LINE, Object.class, List.of()));
        boolean wrote = config.retryPolicy().execute(config.name(), key, "write a line's chunk",
                () -> store.insertChunk(id, entries, Date.from(clock.now())));
        List<Document> chunk = wrote ? entries : chunkEntries(key, id);
        if (chunk == null) {
            return;   // written and already emptied and deleted: the line moved on; look at it again
        }
        if (putInLine(key, lineId, number, chunk)) {
            return;
        }
        if (wrote && unread(config.retryPolicy().execute(config.name(), key, "read line",
                () -> store.lineTail(key)), lineId, number)) {
            store.deleteChunk(id);
        }
    }

    /** The entries of chunk {@code id} of line {@code key}; {@code null} if there is no such chunk. */
    private List<Document> chunkEntries(String key, Document id) {
        List<Document> found = config.retryPolicy().execute(config.name(), key, "read a line's chunk",
                () -> store.lineChunks(List.of(id), shape.chunk()));
        return found.isEmpty() ? null : entries(key, found.get(0).getList(LINE, Object.class, List.of()));
    }

    /**
     * Puts chunk {@code number} of line {@code lineId}, holding {@code chunk}, in the line if it is still the line's
     * next, and notes it there; whether it did.
     */
    private boolean putInLine(String key, Object lineId, int number, List<Document> chunk) {
        Document id = JobStore.chunkId(key, lineId, number);
        if (store.rollLine(key, lineId, number, chunk.stream().map(e -> e.get("n")).toList())) {
            store.chunkInLine(id);
            return true;
        }
        return false;
    }

    /**
     * Whether no line reads chunk {@code number} of line {@code lineId}, by the key's document {@code tail}: there is
     * none, it is another line's (the key's line was deleted and made again), or its head moved past the chunk.
     */
    private static boolean unread(Document tail, Object lineId, int number) {
        return tail == null || !lineId.equals(tail.get(LINE_ID)) || !(tail.get(HEAD_CHUNK) instanceof Integer head)
                || number < head;
    }

    /** {@code raw}, entries of line {@code key}, each checked to be one this queue wrote. */
    private List<Document> entries(String key, List<Object> raw) {
        List<Document> out = new ArrayList<>();
        for (Object entry : raw) {
            if (!(entry instanceof Document d) || d.get("j") == null || !(d.get("n") instanceof String)) {
                throw new ForeignRecordException(config.name(), key, "the line " + Values.show(key) + " holds"
                        + " an entry this queue did not write: " + Values.show(entry), null);
            }
            out.add(d);
        }
        return out;
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
        return move(key, false);
    }

    /**
     * {@link #advance}; after a join ({@code joined}), an ordering key's line that holds chunks is left as it is: the
     * job that joined is behind them, not at the head, and its turn comes when the jobs ahead end, whose enders move
     * the line on (or recovery does, a join not counting as a move). On a concurrency key it may be among the first.
     */
    private boolean move(String key, boolean joined) {
        boolean ordering = key.startsWith(ORDER_LINE);
        // the head alone: an ordering key's first entry, a concurrency key's first (at most its limit); never the
        // whole line, which grows with the key's backlog
        int most = ordering ? 1 : ConcurrencyLimit.MAX_LIMIT;
        for (int i = 0; i < MOVES; i++) {
            Document tail = config.retryPolicy().execute(config.name(), key, "read line",
                    () -> store.lineHead(key, most));
            if (tail == null) {
                return false;
            }
            if (joined && ordering && i == 0 && tail.get(CHUNKS) instanceof Integer chunks && chunks > 0) {
                return true;
            }
            int limit = ordering || !(tail.get(LIMIT) instanceof Integer n) || n < 1 ? 1
                    : Math.min(n, ConcurrencyLimit.MAX_LIMIT);
            List<Placed> first = head(key, tail, limit);
            if (first == null) {
                continue;   // an emptied chunk left the head: look again
            }
            if (first.isEmpty()) {
                store.deleteEmptyLine(key);
                return false;
            }
            Map<Object, Document> jobs = new HashMap<>();
            for (Document job : config.retryPolicy().execute(config.name(), key, "read the first jobs of a line",
                    () -> store.linedJobs(first.stream().map(e -> e.entry().get("j")).toList()))) {
                jobs.put(Ids.idKey(job.get("_id")), job);
            }
            Map<Object, List<Object>> ended = new LinkedHashMap<>();
            List<Map.Entry<Document, Document>> waiting = new ArrayList<>();   // an entry and its job
            for (Placed placed : first) {
                Document entry = placed.entry();
                Document job = jobs.get(Ids.idKey(entry.get("j")));
                Object state = job == null ? null : job.get(STATE);
                boolean ours = job != null && entry.get("n").equals(job.get(LINE_NONCE));
                if (!ours || JobState.DONE.stored().equals(state) || JobState.DISCARDED.stored().equals(state)
                        || (!ordering && JobState.DEAD.stored().equals(state))) {
                    ended.computeIfAbsent(placed.in(), d -> new ArrayList<>()).add(entry.get("n"));
                } else if (JobState.AWAITING.stored().equals(state)) {
                    waiting.add(Map.entry(entry, job));
                }
            }
            if (!ended.isEmpty()) {
                ended.forEach(store::leaveLine);
                continue;   // others may now be among the first
            }
            for (Map.Entry<Document, Document> w : waiting) {
                store.endWait(w.getKey().get("j"), w.getKey().get("n"), w.getValue().get(RUN_AT));
            }
            return true;
        }
        return true;
    }

    /** An entry of a line and the document it is on: the key's (its {@code _id}, the key) or a chunk's. */
    private record Placed(Object in, Document entry) {
    }

    /**
     * The first {@code limit} entries of line {@code key}, whose document is {@code tail}: from its chunks, oldest
     * first, then from the key's document; empty when the line holds none. {@code null} when the head chunk was emptied
     * (or deleted, its head not yet moved): it is deleted and the head moved past it, and the caller looks again.
     */
    private List<Placed> head(String key, Document tail, int limit) {
        List<Placed> out = new ArrayList<>();
        List<Document> ids = JobStore.chunkIds(key, tail);
        int at = 0;
        while (out.size() < limit && at < ids.size()) {
            int batch = Math.min(ids.size() - at, Math.max(1, (limit - out.size() + shape.chunk() - 1)
                    / shape.chunk()));
            List<Document> asked = ids.subList(at, at + batch);
            int want = limit - out.size();
            Map<Object, Document> found = new HashMap<>();
            for (Document chunk : config.retryPolicy().execute(config.name(), key, "read a line's chunks",
                    () -> store.lineChunks(asked, want))) {
                found.put(chunk.get("_id"), chunk);
            }
            for (Document id : asked) {
                Document chunk = found.get(id);
                List<Object> entries = chunk == null ? List.of() : chunk.getList(LINE, Object.class, List.of());
                if (entries.isEmpty() && at == 0 && out.isEmpty()) {
                    // the head chunk, emptied: deleted (unless something was written into it again), then passed
                    if (chunk != null) {
                        store.deleteEmptyChunk(id);
                    }
                    store.dropHeadChunk(key, tail.get(LINE_ID), id.getInteger(JobSchema.CHUNK_NUMBER));
                    return null;
                }
                // an emptied chunk behind the head is passed over; deleted once it is the head
                entries(key, entries).forEach(e -> out.add(new Placed(id, e)));
            }
            at += batch;
        }
        for (Document entry : entries(key, tail.getList(LINE, Object.class, List.of()))) {
            if (out.size() >= limit) {
                break;
            }
            out.add(new Placed(key, entry));
        }
        return out.size() > limit ? out.subList(0, limit) : out;
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
        for (Object id : store.linesBefore(cutoff, PER_PASS)) {
            if (id instanceof String key && !moved.containsKey(key)) {
                boolean inFlight = Passes.orLeftToNextPass(config.name(), "line " + Values.show(key), false,
                        () -> advance(key));
                if (inFlight) {
                    store.lookedAtLine(key);   // a running or dead head: the next passes look at other keys first
                }
                moved.put(key, true);
            } else if (id instanceof Document chunk) {
                Passes.orLeftToNextPass(config.name(), "chunk " + Values.show(chunk), null, () -> {
                    finish(chunk);
                    return null;
                });
            }
        }
    }

    /**
     * Finishes chunk {@code id}, written and never noted in its line (its writer died, or paused): one no line reads
     * (behind its line's head, of a line since deleted) is deleted; one its line has counted is noted in it; one the
     * line has not counted yet, its next, is put in the line, as the join that wrote it would have.
     */
    private void finish(Document id) {
        if (!(id.get(JobSchema.CHUNK_KEY) instanceof String key) || !(id.get(JobSchema.CHUNK_NUMBER)
                instanceof Integer number) || id.get(JobSchema.CHUNK_LINE) == null) {
            store.lookedAtLine(id);   // not one this queue wrote: left alone, behind the others
            return;
        }
        Object lineId = id.get(JobSchema.CHUNK_LINE);
        Document tail = config.retryPolicy().execute(config.name(), key, "read line", () -> store.lineTail(key));
        if (unread(tail, lineId, number) || !(tail.get(NEXT_CHUNK) instanceof Integer next)) {
            store.deleteChunk(id);
        } else if (number < next) {
            store.chunkInLine(id);
        } else {
            List<Document> chunk = chunkEntries(key, id);
            if (chunk != null) {
                putInLine(key, lineId, number, chunk);
            }
        }
    }
}
