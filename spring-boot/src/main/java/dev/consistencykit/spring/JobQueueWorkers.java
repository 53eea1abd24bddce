package dev.consistencykit.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;

import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobWorkers;

/**
 * The job workers the properties ask for, per job queue bean. Its own class, so that the lifecycle loads nothing of
 * the job queue's when its module is not on the class path.
 */
final class JobQueueWorkers {

    private static final Logger LOG = LoggerFactory.getLogger(JobQueueWorkers.class);

    /** One queue's running workers, with the grace their stop may take. */
    private record Pool(String queue, JobWorkers workers, Duration grace) {
    }

    private final List<Pool> pools = new ArrayList<>();

    /** Starts the workers of every job queue bean whose properties ask for some. */
    static JobQueueWorkers start(ListableBeanFactory beans, ConsistencyKitProperties properties) {
        JobQueueWorkers started = new JobQueueWorkers();
        properties.getJobQueue().forEach((key, p) -> {
            if (p.getWorkers() > 0 && beans.containsBean(key)) {
                JobQueue queue = beans.getBean(key, JobQueue.class);
                started.pools.add(new Pool(key, queue.startWorkers(p.getWorkers()), p.getShutdownGrace()));
            }
        });
        return started;
    }

    int pools() {
        return pools.size();
    }

    /** Stops every pool: running jobs finish within the grace, the rest go back to the queue. */
    void stop() {
        for (Pool pool : pools) {
            JobWorkers.ShutdownReport report = pool.workers().stop(pool.grace());
            if (!report.clean()) {
                LOG.warn("job workers of {} stopped with jobs left leased: {}", pool.queue(), report);
            }
        }
        pools.clear();
    }
}
