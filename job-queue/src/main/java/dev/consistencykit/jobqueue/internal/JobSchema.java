package dev.consistencykit.jobqueue.internal;

import java.util.List;
import java.util.Set;

import dev.consistencykit.core.spi.EffectMarker;
import dev.consistencykit.core.spi.LeaseFields;
import dev.consistencykit.core.spi.Transition;
import dev.consistencykit.jobqueue.JobState;

/** The names the job queue stores on a job and on the documents its outbox and its handlers' effects use. */
public final class JobSchema {

    static final String TYPE = "type";
    static final String PAYLOAD = "payload";
    static final String STATE = "state";
    static final String PRIORITY = "priority";
    static final String RUN_AT = "runAt";
    /**
     * On a job a worker may claim ({@code todo} or {@code failed}): its {@link #RUN_AT}, absent in every other state.
     * Every write that moves a job into or out of those states, or moves its run-at time, writes it in the same update,
     * so the claim's index ({@code claim_next}) holds the claimable jobs alone and the claim reads only those that are
     * due. The real engine reads every path of a compound index on its own (docs/servers.md): a claim filtered on the
     * state read every waiting job there, due or not.
     */
    static final String CLAIM_AT = "claimAt";
    static final String ENQUEUED = "enqueuedAt";
    static final String LAST_MODIFIED = Transition.DEFAULT_LAST_MODIFIED_FIELD;
    static final String ATTEMPTS = "attempts";
    static final String MAX_ATTEMPTS = "maxAttempts";
    static final String LAST_ERROR = "lastError";
    static final String OWNER = "owner";
    static final String CLAIMED = "claimedAt";
    static final String LEASE = "leaseExpiresAt";
    static final String TOKEN = "fencingToken";
    static final String DEDUPE = "dedupeKey";
    static final String COMPLETED = "completedAt";
    /** On a job an operator canceled while it waited (state {@code discarded}): the cancel call's nonce. */
    static final String CANCELED = "canceledBy";
    /**
     * On a job: its last attempts, oldest first, at most {@link dev.consistencykit.jobqueue.JobQueueConfig#attemptHistory}:
     * {@code {start, ms, worker, outcome, error}}.
     */
    static final String HISTORY = "history";
    /** The array on business documents holding jobs not yet moved to the queue. */
    public static final String OUTBOX = "jobOutbox";
    /** The reservations of {@code enqueueWith} calls on a business document, {@code {o: job id, n: call}}. */
    public static final String OUTBOX_RESERVED = "jobOutboxReserved";
    /** The ids of the jobs in a business document's outbox, settled (pulled) with their entry by the relay. */
    public static final String OUTBOX_WRITTEN = "jobOutboxWritten";
    /** The array on documents a handler changed with {@code applyOnce}: jobs applied there and not yet done. */
    public static final String APPLIED_JOBS = "appliedJobs";
    /** The reservations of running jobs on documents their handler is about to change, {@code {o: job, n: claim}}. */
    public static final String RESERVED_JOBS = "reservedJobs";
    /** On a job: the documents its handler reserved, {@code [{c: collection, id}]}, settled when it is done. */
    static final String EFFECTS = "effects";
    /** On a done job: its effects' marks are still to be settled. */
    static final String UNSETTLED = "unsettled";
    /**
     * On a job relayed from an outbox: the nonce of the outbox call ({@code enqueueWith}, {@code insertWith},
     * {@code upsertWith}) that wrote it, kept until that call releases it (the store's outbox holds): what a retry of the
     * call, however late, finds after the document no longer shows the entry.
     */
    static final String OUTBOX_NONCE = "outboxNonce";
    /** On a job a relayer recorded and has not yet found still outboxed: the relayer's nonce; no worker claims it. */
    static final String HELD = "heldBy";
    /**
     * Beside {@link #HELD}: where the relayer found the job, {@code {c: collection, d: document id}}, so that recovery
     * can finish what a relayer that died holding it left: release it if the outbox still holds its entry, withdraw it
     * if not.
     */
    static final String HELD_FROM = "heldFrom";

    /**
     * On a job: what the call that enqueued it carried on to its run ({@code traceparent} and the like, from the
     * instance's {@link dev.consistencykit.core.CallObserver}), {@code {name: text}}.
     */
    public static final String TRACE = "trace";
    /** The most entries a job's {@link #TRACE} keeps. */
    static final int MAX_TRACE_ENTRIES = 16;
    /** The longest text of one entry of a job's {@link #TRACE}. */
    static final int MAX_TRACE_CHARS = 1_024;

    /**
     * On a job with an ordering or a concurrency key: the id of its key's line, {@code order:<key>} or
     * {@code limit:<key>}.
     */
    static final String LINE_KEY = "lineKey";
    /** On a job with a concurrency key: how many jobs of its key may run at once (its line's limit when it joins). */
    static final String LINE_LIMIT = "lineLimit";
    /**
     * On a job with a line: the nonce of the call that recorded it, which its entry in the line carries, so that an
     * entry left by a job of that id long gone (pruned, enqueued again) is told apart.
     */
    static final String LINE_NONCE = "lineNonce";
    /**
     * On a key's document and on each chunk of its line: entries {@code [{j: job id, n: line nonce}]}, in the order
     * jobs arrived; the key's document holds the newest, its chunks the older ones.
     */
    static final String LINE = "line";
    /**
     * On a key's document: the id of this line, the line nonce of the job that created the document; a chunk's
     * {@code _id} carries it, so that a chunk left by a line since deleted never passes for one of a new line.
     */
    static final String LINE_ID = "lineId";
    /** On a key's document: the number the next chunk of its line gets (0, 1, …; never used twice by one line). */
    static final String NEXT_CHUNK = "nextChunk";
    /** On a key's document: the number of its line's oldest chunk that may still hold entries. */
    static final String HEAD_CHUNK = "headChunk";
    /** On a key's document: how many chunks its line holds, {@code nextChunk - headChunk}. */
    static final String CHUNKS = "chunks";
    /** In a chunk's {@code _id}, {@code {k: key, l: line id, c: number}}: the key, the line id and the number. */
    static final String CHUNK_KEY = "k";
    /** See {@link #CHUNK_KEY}. */
    static final String CHUNK_LINE = "l";
    /** See {@link #CHUNK_KEY}. */
    static final String CHUNK_NUMBER = "c";
    /** On a concurrency key's document: how many of the line's first jobs may run at once. */
    static final String LIMIT = "limit";
    /**
     * On a key's document: when it last moved, for recovery to look at a key nothing moved for a while; on a chunk,
     * when it was written, until the write that puts it in its line clears it (recovery finishes or removes one
     * left).
     */
    static final String MOVED = "movedAt";
    /** The prefix of an ordering key's line id. */
    static final String ORDER_LINE = "order:";
    /** The prefix of a concurrency key's line id. */
    static final String LIMIT_LINE = "limit:";

    /** On a schedule: the revision of its definition, a new value at each change, which every firing is guarded by. */
    static final String REVISION = "revision";
    /** On a schedule: {@code cron} (with {@link #CRON}, {@link #ZONE}, {@link #MISSED}) or {@code fixedDelay}. */
    static final String KIND = "kind";
    static final String CRON = "cron";
    static final String ZONE = "zone";
    static final String MISSED = "missedRuns";
    /** On a fixed-delay schedule: the delay in milliseconds. */
    static final String DELAY = "delayMillis";
    /** On a schedule: the job each occurrence enqueues, {@code {type, payload, priority, maxAttempts}}. */
    static final String JOB = "job";
    /** On a schedule: when its next occurrence is due; absent once it has none (a cron that names no later time). */
    static final String NEXT = "next";
    /** On a schedule: the time of the last occurrence fired, and the id of its job. */
    static final String LAST_RUN = "lastRun";
    static final String LAST_JOB = "lastJob";
    /** On a schedule: removed, kept until no firing holds a reservation on it. */
    static final String REMOVED = "removed";
    /** On a schedule: paused by an operator (it has no {@link #NEXT} then), and when it was last triggered by hand. */
    static final String PAUSED = "paused";
    static final String TRIGGERED = "triggered";

    static final LeaseFields LEASE_FIELDS = new LeaseFields(OWNER, LEASE, TOKEN);
    static final EffectMarker EFFECT_MARKER = EffectMarker.of(RESERVED_JOBS, APPLIED_JOBS);
    static final EffectMarker OUTBOX_MARKER = EffectMarker.of(OUTBOX_RESERVED, OUTBOX_WRITTEN);

    /** The fields this queue keeps on business documents: no caller's update may touch them. */
    public static final Set<String> EFFECT_FIELDS = Set.of(RESERVED_JOBS, APPLIED_JOBS, OUTBOX, OUTBOX_RESERVED,
            OUTBOX_WRITTEN);
    static final List<String> DUE_STATES = List.of(JobState.TODO.stored(), JobState.FAILED.stored());

    /**
     * What compaction removes from a held done job: all but its id, state, type, dedupe key, times and holds, which is
     * what a late retry of its enqueue reads.
     */
    static final List<String> COMPACTED_AWAY = List.of(PAYLOAD, PRIORITY, RUN_AT, ATTEMPTS, MAX_ATTEMPTS, LAST_ERROR,
            OWNER, CLAIMED, LEASE, TOKEN, EFFECTS, HISTORY, TRACE);

    private JobSchema() {
    }
}
