package dev.consistencykit.jobqueue;

/**
 * Runs jobs of one type. A handler may run more than once for the same job (its worker died after the effect, or was
 * paused past its lease and another worker took over), so its writes must be idempotent per job: use
 * {@link JobContext#applyOnce} or naturally idempotent updates ({@code $addToSet}, {@code $set} of a computed value).
 * An exception fails the attempt: the job is retried with back-off, then goes {@code DEAD}.
 */
@FunctionalInterface
public interface JobHandler {

    /**
     * Does the job's work.
     *
     * @throws Exception to fail this attempt; the message is kept as the job's last error
     */
    void handle(JobContext context) throws Exception;
}
