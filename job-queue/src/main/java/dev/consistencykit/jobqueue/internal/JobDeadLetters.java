package dev.consistencykit.jobqueue.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.in;
import static dev.consistencykit.jobqueue.internal.JobSchema.ATTEMPTS;
import static dev.consistencykit.jobqueue.internal.JobSchema.COMPLETED;
import static dev.consistencykit.jobqueue.internal.JobSchema.EFFECTS;
import static dev.consistencykit.jobqueue.internal.JobSchema.LAST_ERROR;
import static dev.consistencykit.jobqueue.internal.JobSchema.LAST_MODIFIED;
import static dev.consistencykit.jobqueue.internal.JobSchema.OUTBOX_NONCE;
import static dev.consistencykit.jobqueue.internal.JobSchema.RUN_AT;
import static dev.consistencykit.jobqueue.internal.JobSchema.STATE;
import static dev.consistencykit.jobqueue.internal.JobSchema.TOKEN;
import static dev.consistencykit.jobqueue.internal.JobSchema.TYPE;
import static dev.consistencykit.jobqueue.internal.JobSchema.UNSETTLED;

import java.util.ArrayList;
import java.util.Date;
import java.util.List;

import org.bson.Document;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.GuardedResult;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.core.spi.Transition;
import dev.consistencykit.core.spi.UpdateOutcome;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.jobqueue.DeadJobs;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobState;

/** The dead letters: replay, discard and delete of dead jobs, each by compare-and-set or by a guarded filter. */
public final class JobDeadLetters {

    private static final Logger LOG = LoggerFactory.getLogger(JobDeadLetters.class);
    private static final int DISCARD_BATCH = 100;

    private final JobQueueConfig config;
    private final JobStore store;
    private final JobRunner runner;
    private final JobHooks hooks;
    private final ServerClock clock;

    JobDeadLetters(JobQueueConfig config, JobStore store, JobRunner runner, JobHooks hooks, ServerClock clock) {
        this.config = config;
        this.store = store;
        this.runner = runner;
        this.hooks = hooks;
        this.clock = clock;
    }

    /** Puts a dead job back in the queue: {@code TODO}, due now, attempts from zero. */
    public boolean replay(Object id) {
        Ids.operationId(config.name(), "id", id);
        GuardedResult r = store.transition(id, "replay", Transition.of(STATE, JobState.DEAD.stored(),
                JobState.TODO.stored()).alsoUpdating(replayUpdate()));
        return r.outcome() == UpdateOutcome.APPLIED;
    }

    private Bson replayUpdate() {
        Date now = Date.from(clock.now());
        return Updates.combine(Updates.set(ATTEMPTS, 0), Updates.set(RUN_AT, now), Updates.set(JobSchema.CLAIM_AT, now),
                Updates.inc(TOKEN, 1L));
    }

    /**
     * Puts every dead job {@code which} selects back in the queue, in one write: each job moves only while it is dead
     * (the filter is the guard), so a job a worker, a discard or another replay moved first is left as it is. A retry
     * of the write after a lost reply replays only jobs still dead then.
     *
     * @return the jobs replayed by this call's last write
     */
    public long replay(DeadJobs which) {
        Bson filter = deadFilter(config.name(), which, JobState.DEAD);
        return store.updateAll("replay " + which, filter, Updates.combine(Updates.set(STATE,
                JobState.TODO.stored()), Updates.currentDate(LAST_MODIFIED), replayUpdate()));
    }

    /**
     * Discards every dead job {@code which} selects: each moves from {@code DEAD} to {@code DISCARDED} by a
     * compare-and-set (a job replayed first is left running), then the marks of the effects it applied are settled off
     * their documents (recovery settles what a crash between the two leaves, as for a done job).
     *
     * @return the jobs this call discarded
     */
    public long discard(DeadJobs which) {
        Bson filter = deadFilter(config.name(), which, JobState.DEAD);
        long discarded = 0;
        while (true) {
            List<Document> batch = config.retryPolicy().execute(config.name(), null, "find " + which,
                    () -> store.find(filter, Sorts.ascending(RUN_AT), 0, DISCARD_BATCH, EFFECTS,
                            JobSchema.LINE_KEY));
            long before = discarded;
            for (Document job : batch) {
                if (discardOne(job)) {
                    discarded++;
                }
            }
            // each job found left DEAD (discarded here or moved by another), so the next find reads new ones only;
            // a batch of which none was ours means others are acting on the same jobs: theirs to finish
            if (batch.size() < DISCARD_BATCH || discarded == before) {
                return discarded;
            }
        }
    }

    private boolean discardOne(Document job) {
        Object id = job.get("_id");
        boolean effects = !job.getList(EFFECTS, Object.class, List.of()).isEmpty();
        Bson update = Updates.combine(Updates.currentDate(COMPLETED), effects ? Updates.set(UNSETTLED, true)
                : Updates.unset(UNSETTLED));
        GuardedResult r = store.transition(id, "discard", Transition.of(STATE, JobState.DEAD.stored(),
                JobState.DISCARDED.stored()).alsoUpdating(update));
        boolean ours = r.outcome() == UpdateOutcome.APPLIED;
        if (ours) {
            LOG.info("[{}] discarded dead job {}", config.name(), Values.show(id));
        }
        boolean discarded = ours || r.document().map(d -> JobState.DISCARDED.stored().equals(d.get(STATE)))
                .orElse(false);
        if (discarded) {
            ended(id, job);
        }
        return ours;
    }

    /**
     * What follows job {@code job} moving to {@code discarded} (discarded dead, or canceled while it waited): the marks
     * of the effects it applied are settled off their documents, and its key's line moves on (it blocked the key, or
     * held a place in its line). Recovery and the pruner finish what a crash between the two leaves.
     */
    void ended(Object id, Document job) {
        if (!job.getList(EFFECTS, Object.class, List.of()).isEmpty()) {
            runner.settleEffects(id, job);
        }
        hooks.ended(new JobHook.EndedJob(id, job, JobState.DISCARDED, null, null));
    }

    /**
     * Deletes the dead and discarded jobs {@code which} selects: dead ones are discarded first (their marks settled),
     * then each discarded job whose marks are settled is deleted, unless the process that wrote it still holds it
     * ({@link RecordReleases}): such a job is compacted to what a late retry of its enqueue reads, and pruned once
     * released.
     *
     * @return the jobs deleted or compacted
     */
    public long delete(DeadJobs which) {
        discard(which);
        Bson removable = and(deadFilter(config.name(), which, JobState.DISCARDED), exists(UNSETTLED, false),
                exists(RecordReleases.COMPACTED, false));
        long deleted = store.deleteAll("delete " + which, and(removable, RecordReleases.released(),
                exists(OUTBOX_NONCE, false)));
        long compacted = store.compact("compact " + which, removable, JobSchema.COMPACTED_AWAY);
        if (deleted + compacted > 0) {
            LOG.info("[{}] deleted {} {} ({} of them compacted until their writers release them)",
                    config.name(), deleted + compacted, which, compacted);
        }
        return deleted + compacted;
    }

    /** The filter of {@code which}, on jobs in {@code state}; every value is matched as a literal. */
    static Bson deadFilter(String name, DeadJobs which, JobState state) {
        List<Bson> parts = new ArrayList<>();
        parts.add(eq(STATE, state.stored()));
        which.type().ifPresent(t -> parts.add(eq(TYPE, t)));
        which.errorContaining().ifPresent(t -> parts.add(Filters.regex(LAST_ERROR, literalRegex(t))));
        if (!which.ids().isEmpty()) {
            List<Object> ids = new ArrayList<>();
            for (OperationId id : which.ids()) {
                ids.add(Ids.operationId(name, "id", id.value()));
            }
            parts.add(in("_id", ids));
        }
        return and(parts);
    }

    /** {@code text} as a regular expression matching exactly it: every character but letters and digits escaped. */
    static String literalRegex(String text) {
        StringBuilder out = new StringBuilder(text.length() * 2);
        text.codePoints().forEach(c -> {
            if (!Character.isLetterOrDigit(c) && c != ' ' && c < 128) {
                out.append('\\');
            }
            out.appendCodePoint(c);
        });
        return out.toString();
    }
}
