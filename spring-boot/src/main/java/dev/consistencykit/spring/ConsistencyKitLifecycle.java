package dev.consistencykit.spring;

import java.util.ArrayList;
import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.util.ClassUtils;

import com.mongodb.client.MongoClient;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.ServerUnavailableException;
import dev.consistencykit.core.Maintenance;
import dev.consistencykit.core.MaintenanceStep;

/**
 * The instances' life with the application's: on start, every instance's indexes (unless switched off), the
 * recurring jobs the properties declare ({@link DeclaredSchedules}), then the maintenance runner over every instance (its recovery and pruning), then the job workers the properties ask for;
 * on stop, the workers first (running jobs finish within their grace, the rest go back to the queue), then the
 * runner. Stops early in Boot's shutdown, before the MongoClient closes.
 */
final class ConsistencyKitLifecycle implements SmartLifecycle {

    private static final Logger LOG = LoggerFactory.getLogger(ConsistencyKitLifecycle.class);

    private final ListableBeanFactory beans;
    private final ConsistencyKitProperties properties;
    private Maintenance maintenance;
    private JobQueueWorkers workers;
    private volatile boolean running;

    ConsistencyKitLifecycle(ListableBeanFactory beans, ConsistencyKitProperties properties) {
        this.beans = beans;
        this.properties = properties;
    }

    @Override
    public synchronized void start() {
        List<ConsistencyStrategy<?>> instances = new ArrayList<>();
        beans.getBeansOfType(ConsistencyStrategy.class).values().forEach(instances::add);
        if (properties.isEnsureIndexes()) {
            try {
                instances.forEach(ConsistencyStrategy::ensureIndexes);
            } catch (ServerUnavailableException e) {
                throw new IllegalStateException(unreachable(e), e);
            }
        }
        boolean jobQueues = ClassUtils.isPresent("dev.consistencykit.jobqueue.JobQueue", getClass().getClassLoader());
        if (jobQueues) {
            DeclaredSchedules.apply(beans, properties);
        }
        List<MaintenanceStep> relays = jobQueues
                ? JobQueueWorkers.outboxRelays(beans, properties, properties.isEnsureIndexes()) : List.of();
        if (properties.getMaintenance().isEnabled() && !instances.isEmpty()) {
            Maintenance.Builder builder = Maintenance.builder();
            instances.forEach(builder::strategy);
            relays.forEach(builder::step);
            maintenance = builder.build().start();
        }
        if (jobQueues) {
            workers = JobQueueWorkers.start(beans, properties);
        }
        running = true;
        LOG.info("consistency-kit started: {} instances, maintenance {}, {} worker pools", instances.size(),
                maintenance != null ? "running" : "off", workers == null ? 0 : workers.pools());
    }

    @Override
    public synchronized void stop() {
        if (workers != null) {
            workers.stop();
            workers = null;
        }
        if (maintenance != null) {
            maintenance.stop(properties.getMaintenance().getShutdownGrace());
            maintenance = null;
        }
        running = false;
    }

    /**
     * What to do when the server does not answer at start: the hosts the client tried, and the properties that name a
     * server (never the URI itself: it may carry a password).
     */
    private String unreachable(ServerUnavailableException e) {
        List<String> hosts = new ArrayList<>();
        beans.getBeanProvider(MongoClient.class).ifAvailable(client -> client.getClusterDescription()
                .getServerDescriptions().forEach(d -> hosts.add(d.getAddress().toString())));
        return "consistency-kit could not reach MongoDB at " + (hosts.isEmpty() ? "the configured hosts" : hosts)
                + " (" + e.getMessage() + "). Set spring.mongodb.uri to a reachable server (or"
                + " consistency-kit.embedded.enabled=true for an in-memory server in development and tests), or"
                + " consistency-kit.ensure-indexes=false to start without creating the indexes";
    }

    /** The maintenance runner while started with maintenance on, else {@code null}. */
    synchronized Maintenance maintenance() {
        return maintenance;
    }

    @Override
    public boolean isRunning() {
        return running;
    }
}
