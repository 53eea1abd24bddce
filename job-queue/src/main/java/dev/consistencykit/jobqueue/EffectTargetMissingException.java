package dev.consistencykit.jobqueue;

import dev.consistencykit.core.ConsistencyException;

/**
 * {@link JobContext#applyOnce} found no document to apply the job's effect to: nothing was written. Thrown out of the
 * handler, it fails the attempt with this message as the job's error, so a job whose target is missing is never
 * reported done without its effect. Handlers for which a missing document is normal use
 * {@link JobContext#applyOnceIfPresent}.
 */
public class EffectTargetMissingException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    private final String collection;
    private final transient Object targetId;

    /**
     * @param instanceName the queue
     * @param jobId        the job whose effect it was
     * @param collection   the collection named by the handler
     * @param targetId     the missing document's id
     */
    public EffectTargetMissingException(String instanceName, Object jobId, String collection, Object targetId) {
        super(instanceName, jobId, "the effect's document " + collection + "/" + targetId + " does not exist;"
                + " nothing was written (use applyOnceIfPresent where a missing document is expected)");
        this.collection = collection;
        this.targetId = targetId;
    }

    /** The collection named by the handler. */
    public String collection() {
        return collection;
    }

    /** The id of the document that was missing. */
    public Object targetId() {
        return targetId;
    }
}
