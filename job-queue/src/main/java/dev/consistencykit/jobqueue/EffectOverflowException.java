package dev.consistencykit.jobqueue;

import dev.consistencykit.core.ConsistencyException;

/**
 * A job's effect was refused because one of its integral {@code $inc}s would take a field of the document past the
 * range of a 64-bit integer; nothing was written. The attempt fails with this reason, like any failed attempt.
 */
public class EffectOverflowException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param instanceName the queue
     * @param jobId        the job whose effect it was
     * @param message      which document and which {@code $inc}
     */
    public EffectOverflowException(String instanceName, Object jobId, String message) {
        super(instanceName, jobId, message);
    }
}
