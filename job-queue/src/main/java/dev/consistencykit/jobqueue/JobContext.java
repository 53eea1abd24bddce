package dev.consistencykit.jobqueue;

import org.bson.Document;
import org.bson.conversions.Bson;

import dev.consistencykit.core.LeaseLostException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.spi.UpdateOutcome;

/** What a {@link JobHandler} gets: the job, and helpers that keep its effects to one per job. */
public interface JobContext {

    /** The job's id. */
    OperationId id();

    /** The job's type. */
    String type();

    /** The job's payload, as stored. */
    Document payload();

    /**
     * The job's payload decoded as {@code type} with the database's codec registry: the record or POJO it was
     * enqueued as.
     *
     * @throws dev.consistencykit.core.InvalidInputException if the stored payload cannot be read as {@code type} (the
     *         attempt fails with that reason, like any exception of a handler)
     */
    <T> T payload(Class<T> type);

    /** This attempt's number, from 1. */
    int attempt();

    /** This claim's fencing token. */
    long fencingToken();

    /**
     * Applies {@code update} to document {@code documentId} of {@code collection} at most once for this job, however
     * often the job runs and however late a worker that lost the job wakes: the document is first reserved for this
     * claim ({@code reservedJobs}), the claim is checked (and the document recorded on the job), and the update is
     * applied under this claim's reservation, which moves the job's id to the document's {@code appliedJobs} array in
     * the same atomic write. Both marks are removed once the job is done. Three round trips.
     *
     * <p>An effect whose document is missing cannot be ignored: it throws, so the attempt fails with that reason (and
     * the job is retried, then dead, like any failed attempt). A handler for which a missing document is normal calls
     * {@link #applyOnceIfPresent} and decides.
     *
     * @return {@code APPLIED}, or {@code ALREADY_APPLIED} when an earlier run of this job applied it
     * @throws EffectTargetMissingException if there is no such document (nothing was written)
     * @throws LeaseLostException if another worker took the job over: stop working on it
     */
    UpdateOutcome applyOnce(String collection, Object documentId, Bson update);

    /**
     * {@link #applyOnce}, except that a missing document is an answer rather than an error.
     *
     * @return {@code APPLIED}, {@code ALREADY_APPLIED}, or {@code MISSING} when there is no such document (nothing
     *         was written)
     * @throws LeaseLostException if another worker took the job over: stop working on it
     */
    UpdateOutcome applyOnceIfPresent(String collection, Object documentId, Bson update);

    /**
     * Extends this worker's lease (a heartbeat for a long job; workers started with {@link JobQueue#startWorkers}
     * also do it in the background).
     *
     * @throws LeaseLostException if another worker took the job over: stop working on it
     */
    void heartbeat();
}
