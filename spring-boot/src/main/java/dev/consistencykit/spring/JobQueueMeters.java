package dev.consistencykit.spring;

import org.springframework.beans.factory.BeanFactory;

import io.micrometer.core.instrument.MeterRegistry;

import dev.consistencykit.jobqueue.JobQueueListener;
import dev.consistencykit.micrometer.ConsistencyKitMeters;

/**
 * A job queue's metering listener. Its own class, so that the instances load nothing of Micrometer when the application
 * has none.
 */
final class JobQueueMeters {

    private JobQueueMeters() {
    }

    /** Counts queue {@code key}'s job events per type in the application's meter registry, if it has exactly one. */
    static JobQueueListener listener(BeanFactory beans, String key) {
        MeterRegistry registry = beans.getBeanProvider(MeterRegistry.class).getIfUnique();
        return registry == null ? null : ConsistencyKitMeters.listener(JobQueueListener.class, registry, key);
    }
}
