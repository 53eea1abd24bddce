package dev.consistencykit.jobqueue.internal;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.spi.Listeners;
import dev.consistencykit.jobqueue.JobQueueListener;
import dev.consistencykit.jobqueue.JobState;

/**
 * The queue's counters and the application's listener, told of every job that ended, failed, was requeued or lost
 * its worker's lease; a listener's exception is logged and ignored.
 */
public final class JobNotices implements JobHook {

    private final String name;
    private final JobCounters counters;
    private final JobQueueListener listener;

    JobNotices(String name, JobCounters counters, JobQueueListener listener) {
        this.name = name;
        this.counters = counters;
        this.listener = listener;
    }

    /** The application's listener, for what the workers tell it themselves (a worker's error, its death). */
    public JobQueueListener listener() {
        return listener;
    }

    @Override
    public void ended(EndedJob ended) {
        OperationId id = new OperationId(ended.id());
        String type = ended.job().getString(JobSchema.TYPE);
        if (ended.state() == JobState.DONE) {
            counters.done.increment();
            Listeners.call(name, () -> listener.onDone(id, type));
        } else if (ended.state() == JobState.DEAD) {
            counters.dead.increment();
            Listeners.call(name, () -> listener.onDead(id, type, ended.error(), ended.thrown()));
        }
    }

    @Override
    public void failed(Object jobId, String type, int attempt, String error, Throwable thrown) {
        counters.failed.increment();
        Listeners.call(name, () -> listener.onFailed(new OperationId(jobId), type, attempt, error, thrown));
    }

    @Override
    public void requeued(Object jobId, String type) {
        counters.requeued.increment();
        Listeners.call(name, () -> listener.onRequeued(new OperationId(jobId), type));
    }

    @Override
    public void leaseLost(Object jobId, String type) {
        counters.leaseLost.increment();
        Listeners.call(name, () -> listener.onLeaseLost(new OperationId(jobId), type));
    }
}
