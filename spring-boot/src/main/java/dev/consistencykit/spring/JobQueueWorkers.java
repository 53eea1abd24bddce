package dev.consistencykit.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.MaintenanceStep;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobWorkers;
import dev.consistencykit.jobqueue.WorkerThreads;

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
                started.pools.add(new Pool(key, queue.startWorkers(p.getWorkers(),
                        WorkerThreads.valueOf(p.getWorkerThreads().name())), p.getShutdownGrace()));
            }
        });
        return started;
    }

    /**
     * The relay of each outbox collection a job queue's properties name ({@code outbox-collections}): its index
     * created when {@code createIndexes}, and a maintenance step every {@code relay-every} that moves outboxed jobs
     * into the queue and releases the reservations of calls that died.
     */
    static List<MaintenanceStep> outboxRelays(ListableBeanFactory beans, ConsistencyKitProperties properties,
                                              boolean createIndexes) {
        List<MaintenanceStep> steps = new ArrayList<>();
        properties.getJobQueue().forEach((key, p) -> {
            if (p.getOutboxCollections().isEmpty() || !beans.containsBean(key)) {
                return;
            }
            JobQueue queue = beans.getBean(key, JobQueue.class);
            MongoDatabase db = beans.getBean(ConsistencyKitDatabase.class).database();
            for (String name : p.getOutboxCollections()) {
                MongoCollection<Document> collection = db.getCollection(name);
                if (createIndexes) {
                    JobQueue.ensureOutboxIndex(collection);
                }
                steps.add(MaintenanceStep.of(queue.name() + " relay " + name, p.getRelayEvery(),
                        () -> queue.relayOutbox(collection)));
            }
        });
        return steps;
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
