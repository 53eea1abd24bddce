package dev.consistencykit.spring;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.BeanDefinitionRegistryPostProcessor;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.EnvironmentAware;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.CallObserver;
import dev.consistencykit.jobqueue.JobHandler;

/**
 * Registers one bean per instance the properties declare, named by its key, unless the application defines a bean of
 * that name itself (its own wins). A pattern whose module is not on the class path is skipped. Each bean is built when
 * first needed, on the {@link ConsistencyKitDatabase} bean; a job queue gets every job handler bean.
 */
final class ConsistencyKitInstances implements BeanDefinitionRegistryPostProcessor, EnvironmentAware,
        BeanFactoryAware, Ordered {

    private Environment environment;
    private BeanFactory beanFactory;
    /** The pattern each instance key was declared for. */
    private final Map<String, Class<?>> declared = new java.util.HashMap<>();

    @Override
    public void setEnvironment(Environment value) {
        this.environment = value;
    }

    @Override
    public void setBeanFactory(BeanFactory value) {
        this.beanFactory = value;
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;   // after the application's own configuration classes are registered
    }

    @Override
    public void postProcessBeanDefinitionRegistry(BeanDefinitionRegistry registry) {
        Binder binder = Binder.get(environment);
        ConsistencyKitProperties p = binder.bind("consistency-kit", ConsistencyKitProperties.class)
                .orElseGet(ConsistencyKitProperties::new);
        InstanceSettings.refuseUnknownBelow(binder, "consistency-kit", ConsistencyKitProperties.class);
        ClassLoader loader = getClass().getClassLoader();
        if (ClassUtils.isPresent("dev.consistencykit.twophase.TwoPhaseCommit", loader)) {
            register(registry, binder, "two-phase", p.getTwoPhase(), ConsistencyKitProperties.Instance::new,
                    dev.consistencykit.twophase.TwoPhaseCommit.class,
                    source -> () -> InstanceBuilders.twoPhase(database(), shared(), source));
        }
        if (ClassUtils.isPresent("dev.consistencykit.jobqueue.JobQueue", loader)) {
            register(registry, binder, "job-queue", p.getJobQueue(), ConsistencyKitProperties.JobQueue::new,
                    dev.consistencykit.jobqueue.JobQueue.class,
                    source -> () -> InstanceBuilders.jobQueue(database(), shared(), source, handlers(),
                            jobListener(source.key())));
        }
        if (ClassUtils.isPresent("dev.consistencykit.syncflag.SyncFlag", loader)) {
            register(registry, binder, "sync-flag", p.getSyncFlag(), ConsistencyKitProperties.SyncFlag::new,
                    dev.consistencykit.syncflag.SyncFlag.class,
                    source -> () -> InstanceBuilders.syncFlag(database(), shared(), source));
        }
        if (ClassUtils.isPresent("dev.consistencykit.logreconciliation.Ledger", loader)) {
            register(registry, binder, "ledger", p.getLedger(), ConsistencyKitProperties.Instance::new,
                    dev.consistencykit.logreconciliation.Ledger.class,
                    source -> () -> InstanceBuilders.ledger(database(), shared(), source));
        }
        if (ClassUtils.isPresent("dev.consistencykit.versioning.VersionedStore", loader)) {
            register(registry, binder, "versioning", p.getVersioning(), ConsistencyKitProperties.Versioning::new,
                    dev.consistencykit.versioning.VersionedStore.class,
                    source -> () -> InstanceBuilders.versioning(database(), shared(), source));
        }
    }

    /**
     * One bean per instance key under {@code consistency-kit.<pattern>}: a key with any property declares an
     * instance, one of its settings ({@code ...payments.lease=30s}) as well as one of {@code own}'s properties.
     */
    private <P extends ConsistencyKitProperties.Instance, T> void register(
            BeanDefinitionRegistry registry, Binder binder, String pattern, Map<String, P> own,
            Supplier<P> none, Class<T> type, Function<InstanceBuilders.Source, Supplier<T>> factory) {
        Set<String> keys = new LinkedHashSet<>(binder.bind("consistency-kit." + pattern,
                Bindable.mapOf(String.class, Object.class)).orElse(Map.of()).keySet());
        keys.addAll(own.keySet());
        for (String key : keys) {
            Class<?> earlier = declared.putIfAbsent(key, type);
            if (earlier != null) {
                // two instances cannot share a bean name: refused rather than one of them silently missing
                throw new IllegalStateException("consistency-kit: the instance key '" + key + "' is declared for "
                        + earlier.getSimpleName() + " and for " + type.getSimpleName() + "; each key is a bean name"
                        + " and must be unique across patterns");
            }
            if (!registry.containsBeanDefinition(key)) {
                InstanceBuilders.Source source = new InstanceBuilders.Source(binder, pattern, key,
                        own.containsKey(key) ? own.get(key) : none.get());
                registry.registerBeanDefinition(key, new RootBeanDefinition(type, factory.apply(source)));
            }
        }
    }

    private MongoDatabase database() {
        return beanFactory.getBean(ConsistencyKitDatabase.class).database();
    }

    /** What the application gives every instance. */
    private InstanceBuilders.Shared shared() {
        return new InstanceBuilders.Shared(observer(),
                beanFactory.getBeanProvider(java.time.Clock.class).getIfUnique(() -> null));
    }

    /** The application's call observer (observations when Micrometer's are there), or none. */
    private CallObserver observer() {
        return beanFactory.getBeanProvider(CallObserver.class).getIfAvailable(() -> CallObserver.NONE);
    }

    /**
     * The listener of job queue {@code key}: the application's own {@code JobQueueListener} bean when it has exactly
     * one; else, with Micrometer and {@code consistency-kit-micrometer} present, one that counts every job event in
     * {@code consistencykit.events} tagged with the job's type (outcomes per type); else none.
     */
    private dev.consistencykit.jobqueue.JobQueueListener jobListener(String key) {
        dev.consistencykit.jobqueue.JobQueueListener own = beanFactory
                .getBeanProvider(dev.consistencykit.jobqueue.JobQueueListener.class).getIfUnique();
        if (own != null) {
            return own;
        }
        ClassLoader loader = getClass().getClassLoader();
        if (ClassUtils.isPresent("dev.consistencykit.micrometer.ConsistencyKitMeters", loader)
                && ClassUtils.isPresent("io.micrometer.core.instrument.MeterRegistry", loader)) {
            return JobQueueMeters.listener(beanFactory, key);
        }
        return null;
    }

    /** Every job handler bean by its job type: {@link TypedJobHandler#jobType()}, or else its bean name. */
    private Map<String, JobHandler> handlers() {
        Map<String, JobHandler> byType = new LinkedHashMap<>();
        ((ListableBeanFactory) beanFactory).getBeansOfType(JobHandler.class).forEach((name, handler) -> byType.put(
                handler instanceof TypedJobHandler typed ? typed.jobType() : name, handler));
        return byType;
    }
}
