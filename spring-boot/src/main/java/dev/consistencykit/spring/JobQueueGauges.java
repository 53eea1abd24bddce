package dev.consistencykit.spring;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.jobqueue.JobBacklog;
import dev.consistencykit.jobqueue.JobQueue;

/**
 * A job queue's jobs per type as gauges: {@code consistencykit.jobs} tagged with {@code state} ({@code waiting}, {@code
 * scheduled}, {@code awaiting}, {@code running}, {@code dead}) and {@code type}, and {@code
 * consistencykit.jobs.oldest.waiting} (seconds) per type; with the instance and pattern tags of every meter. The types
 * are those the queue has handlers for and those it holds jobs of when bound. Read from {@link
 * JobQueueOperator#backlog()} (bounded reads over indexes led by the state) at most every {@link #FRESH_FOR}, however
 * often the registry is scraped; a read that fails leaves the gauges at NaN until one succeeds. Its own class, so that
 * nothing of the job queue's module loads when the application has none.
 *
 * <p>As every Micrometer binder, the gauges hold the queue weakly and this cache strongly (their functions capture
 * it): the cache holds no reference to the queue, so the gauges live as long as the queue and nothing keeps a closed
 * queue alive. (A registry keeps only a weak reference to a gauge's object: the cache as that object would be
 * collected at the first garbage collection, as nothing else holds it, and every gauge would read NaN from then on.)
 */
final class JobQueueGauges {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(JobQueueGauges.class);

    /** How long one read of the backlog serves the gauges. */
    static final Duration FRESH_FOR = Duration.ofSeconds(10);

    private final String name;
    private Map<String, JobBacklog> byType = Map.of();
    private long readAt = Long.MIN_VALUE;
    private boolean failed;

    private JobQueueGauges(String name) {
        this.name = name;
    }

    /** Binds the gauges of {@code instance}, a job queue, to {@code registry}. */
    static void bind(MeterRegistry registry, ConsistencyStrategy<?> instance) {
        JobQueue queue = (JobQueue) instance;
        JobQueueGauges gauges = new JobQueueGauges(queue.name());
        Set<String> types = new TreeSet<>(queue.handlerTypes());
        types.addAll(gauges.current(queue).keySet());
        gauges.stale();   // the first scrape reads afresh
        Tags tags = Tags.of("instance", queue.name(), "pattern", queue.pattern());
        for (String type : types) {
            gauges.gauge(registry, queue, tags, type, "waiting", JobBacklog::waiting);
            gauges.gauge(registry, queue, tags, type, "scheduled", JobBacklog::scheduled);
            gauges.gauge(registry, queue, tags, type, "awaiting", JobBacklog::awaiting);
            gauges.gauge(registry, queue, tags, type, "running", JobBacklog::running);
            gauges.gauge(registry, queue, tags, type, "dead", JobBacklog::dead);
            Gauge.builder("consistencykit.jobs.oldest.waiting", queue, q -> gauges.value(q, type,
                            b -> b.oldestWaiting().map(d -> d.toMillis() / 1000.0).orElse(0.0)))
                    .tags(tags).tag("type", type).baseUnit("seconds")
                    .description("how long the oldest due job of the type has waited").register(registry);
        }
    }

    private void gauge(MeterRegistry registry, JobQueue queue, Tags tags, String type, String state,
            ToDoubleFunction<JobBacklog> n) {
        Gauge.builder("consistencykit.jobs", queue, q -> value(q, type, n)).tags(tags).tag("type", type)
                .tag("state", state).description("jobs of the type " + state).register(registry);
    }

    private double value(JobQueue queue, String type, ToDoubleFunction<JobBacklog> of) {
        Map<String, JobBacklog> now = current(queue);
        if (failed) {
            return Double.NaN;
        }
        return Optional.ofNullable(now.get(type)).map(of::applyAsDouble).orElse(0.0);
    }

    private synchronized void stale() {
        readAt = Long.MIN_VALUE;
    }

    /** The backlog by type, read again when the last read is older than {@link #FRESH_FOR}. */
    private synchronized Map<String, JobBacklog> current(JobQueue queue) {
        long now = System.nanoTime();
        if (readAt == Long.MIN_VALUE || now - readAt >= FRESH_FOR.toNanos()) {
            readAt = now;
            try {
                Map<String, JobBacklog> read = new java.util.HashMap<>();
                for (JobBacklog b : queue.operator().backlog()) {
                    read.put(b.type(), b);
                }
                byType = read;
                failed = false;
            } catch (ConsistencyException e) {
                LOG.debug("[{}] could not read the jobs by type for the gauges: {}", name, e.toString());
                failed = true;
            }
        }
        return byType;
    }
}
