package dev.consistencykit.jobqueue.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lte;
import static dev.consistencykit.jobqueue.internal.JobSchema.COMPLETED;
import static dev.consistencykit.jobqueue.internal.JobSchema.OUTBOX_NONCE;
import static dev.consistencykit.jobqueue.internal.JobSchema.STATE;
import static dev.consistencykit.jobqueue.internal.JobSchema.UNSETTLED;

import java.time.Duration;

import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobState;

/** The pruner: done and discarded jobs past retention deleted, or compacted while their writers hold them. */
public final class JobPruner {

    private static final Logger LOG = LoggerFactory.getLogger(JobPruner.class);

    private final JobQueueConfig config;
    private final JobStore store;
    private final JobCounters counters;
    private final ServerClock clock;

    JobPruner(JobQueueConfig config, JobStore store, JobCounters counters, ServerClock clock) {
        this.config = config;
        this.store = store;
        this.counters = counters;
        this.clock = clock;
    }

    /**
     * Deletes {@code DONE} jobs completed more than {@code retention} ago whose effects are settled and whose recorder
     * released them ({@link RecordReleases}), and, relayed from an outbox, whose outbox call released them, after
     * releasing those this instance recorded or wrote by an outbox call.
     */
    public long prune(Duration retention) {
        store.close();
        // a job its recorder has not released may still be written again by that recorder's retry: kept
        Bson past = and(in(STATE, JobState.DONE.stored(), JobState.DISCARDED.stored()),
                lte(COMPLETED, clock.cutoff(retention)),
                exists(UNSETTLED, false));
        long n = store.deleteAll("prune", and(past, RecordReleases.released(), exists(OUTBOX_NONCE, false)));
        counters.pruned.add(n);
        // still held: only what a late retry of the enqueue (or of the outbox call) reads is kept
        long compacted = store.compact("compact held jobs", past, JobSchema.COMPACTED_AWAY);
        if (compacted > 0) {
            LOG.info("[{}] compacted {} done jobs past their retention that their writers still hold",
                    config.name(), compacted);
        }
        return n;
    }
}
