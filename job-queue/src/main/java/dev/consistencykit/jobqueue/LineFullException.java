package dev.consistencykit.jobqueue;

import dev.consistencykit.core.ConsistencyException;

/**
 * A job's ordering or concurrency key already holds {@link JobQueueConfig#maxKeyBacklog()} jobs in its line: the job
 * is refused, kept in state {@code discarded} with this reason, and never runs; enqueue it again once the key's backlog
 * has gone down (under another id: this one is taken). Without the bound, the line's document would grow to the
 * server's 16 MiB and every later write of the key would fail.
 */
public class LineFullException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param instanceName the queue
     * @param jobId        the job refused
     * @param message      the key and its bound
     */
    public LineFullException(String instanceName, Object jobId, String message) {
        super(instanceName, jobId, message);
    }
}
