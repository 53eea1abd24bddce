package dev.consistencykit.jobqueue.internal;

import org.bson.Document;

import dev.consistencykit.core.spi.Claim;

/**
 * A claimed job: the claim (owner, fencing token) and the job as the claim read it.
 *
 * @param claim     the claim
 * @param job       the job document
 * @param claimedAt when this process claimed it ({@link System#nanoTime}), for how long the attempt took
 */
public record ClaimedJob(Claim claim, Document job, long claimedAt) {

    Object id() {
        return job.get("_id");
    }
}
