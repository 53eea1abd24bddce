package dev.consistencykit.jobqueue;

import java.time.Duration;
import java.util.Objects;
/**
 * A job a worker holds ({@link JobQueueOperator#running}): who runs what, and how alive it looks. A worker renews its
 * lease while its handler runs, so a lease that keeps moving is a live worker; one that ran out is a worker gone
 * (recovery requeues its job).
 *
 * @param id        the job's id, as stored
 * @param type      its type
 * @param owner     the worker holding it (its process and thread, as the worker names itself)
 * @param running   how long since it was claimed, by server time
 * @param leaseLeft how long its lease still runs, by server time; zero or negative once it ran out
 */
public record RunningJob(Object id, String type, String owner, Duration running, Duration leaseLeft) {

    public RunningJob {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(running, "running");
        Objects.requireNonNull(leaseLeft, "leaseLeft");
    }
}
