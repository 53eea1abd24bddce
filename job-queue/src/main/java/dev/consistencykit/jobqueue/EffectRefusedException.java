package dev.consistencykit.jobqueue;

import dev.consistencykit.core.ConsistencyException;

/**
 * A job's effect was refused before it applied, nothing written: one of its integral {@code $inc}s would take a field
 * of the document past the range of a 64-bit integer, or an {@code $inc} or {@code $mul} meets a field that holds no
 * plain number (an array, which a condition matches by any element; NaN or an infinity, which it cannot change; a
 * string, {@code null}, a document; a decimal the sum of an integral {@code $inc} would need more than 34 digits for).
 * The attempt fails with this reason, like any failed attempt.
 */
public class EffectRefusedException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param instanceName the queue
     * @param jobId        the job whose effect it was
     * @param message      which document, which {@code $inc} or {@code $mul}, and what its field holds
     */
    public EffectRefusedException(String instanceName, Object jobId, String message) {
        super(instanceName, jobId, message);
    }
}
