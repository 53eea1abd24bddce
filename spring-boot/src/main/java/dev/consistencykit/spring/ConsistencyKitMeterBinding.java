package dev.consistencykit.spring;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;

import io.micrometer.core.instrument.MeterRegistry;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.micrometer.ConsistencyKitMeters;

/**
 * Binds every instance's counters ({@code consistencykit.*}, tagged with the instance and the pattern), and each job
 * queue's gauges of its jobs by type and state ({@link JobQueueGauges}), to the application's meter registry once every
 * bean exists: the primary registry, or the only one.
 */
final class ConsistencyKitMeterBinding implements SmartInitializingSingleton {

    private final ListableBeanFactory beans;
    private final ObjectProvider<MeterRegistry> registry;

    ConsistencyKitMeterBinding(ListableBeanFactory beans, ObjectProvider<MeterRegistry> registry) {
        this.beans = beans;
        this.registry = registry;
    }

    @Override
    public void afterSingletonsInstantiated() {
        MeterRegistry target = registry.getIfUnique();
        if (target == null) {
            return;
        }
        for (ConsistencyStrategy<?> instance : beans.getBeansOfType(ConsistencyStrategy.class).values()) {
            ConsistencyKitMeters.bind(target, instance);
            if ("job-queue".equals(instance.pattern())) {
                JobQueueGauges.bind(target, instance);
            }
        }
    }
}
