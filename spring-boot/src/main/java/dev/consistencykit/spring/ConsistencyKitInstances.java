package dev.consistencykit.spring;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.BeanUtils;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.BeanNameAware;
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
        BeanFactoryAware, BeanNameAware, Ordered {

    private Environment environment;
    private BeanFactory beanFactory;
    private String beanName;
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
    public void setBeanName(String value) {
        this.beanName = value;
    }

    @Override
    public void postProcessBeanDefinitionRegistry(BeanDefinitionRegistry registry) {
        Binder binder = Binder.get(environment);
        ConsistencyKitProperties p = binder.bind("consistency-kit", ConsistencyKitProperties.class)
                .orElseGet(ConsistencyKitProperties::new);
        InstanceSettings.refuseUnknownBelow(binder, "consistency-kit", ConsistencyKitProperties.class);
        ClassLoader loader = getClass().getClassLoader();
        for (InstanceBuilders.Kind kind : InstanceBuilders.KINDS) {
            if (ClassUtils.isPresent(kind.instanceType(), loader)) {
                register(registry, binder, kind.key(), own(p, kind.key()), kind.instanceType());
            }
        }
    }

    /**
     * One bean per instance key under {@code consistency-kit.<pattern>}: a key with any property declares an
     * instance, one of its settings ({@code ...payments.lease=30s}) as well as one of its own properties. Each is
     * made by {@link #instance} of this bean, with the pattern and the key as arguments: a definition Spring's
     * ahead-of-time processing turns into code (an instance supplier it cannot).
     */
    private void register(BeanDefinitionRegistry registry, Binder binder, String pattern,
                          Map<String, ? extends ConsistencyKitProperties.Instance> own, String typeName) {
        Class<?> type = ClassUtils.resolveClassName(typeName, getClass().getClassLoader());
        Set<String> keys = new LinkedHashSet<>(binder.bind("consistency-kit." + pattern,
                Bindable.mapOf(String.class, Object.class)).orElse(Map.of()).keySet());
        keys.addAll(own.keySet());
        for (String key : keys) {
            Class<?> earlier = declared.putIfAbsent(key, type);
            if (earlier != null && earlier != type) {
                // two instances cannot share a bean name: refused rather than one of them silently missing
                throw new IllegalStateException("consistency-kit: the instance key '" + key + "' is declared for "
                        + earlier.getSimpleName() + " and for " + type.getSimpleName() + "; each key is a bean name"
                        + " and must be unique across patterns");
            }
            if (!registry.containsBeanDefinition(key)) {
                RootBeanDefinition definition = new RootBeanDefinition();
                definition.setTargetType(type);
                definition.setFactoryBeanName(beanName);
                definition.setFactoryMethodName("instance");
                definition.getConstructorArgumentValues().addIndexedArgumentValue(0, pattern);
                definition.getConstructorArgumentValues().addIndexedArgumentValue(1, key);
                registry.registerBeanDefinition(key, definition);
            }
        }
    }

    /** The instances of {@code pattern} the properties declare with properties of their own class, by key. */
    private static Map<String, ? extends ConsistencyKitProperties.Instance> own(ConsistencyKitProperties p,
                                                                                String pattern) {
        return switch (pattern) {
            case "two-phase" -> p.getTwoPhase();
            case "job-queue" -> p.getJobQueue();
            case "sync-flag" -> p.getSyncFlag();
            case "ledger" -> p.getLedger();
            case "versioning" -> p.getVersioning();
            default -> throw new IllegalArgumentException("no pattern " + pattern);
        };
    }

    /**
     * The instance {@code key} of {@code pattern}, built from the properties as they are when it is made: the factory
     * method of the beans {@link #postProcessBeanDefinitionRegistry} registers.
     */
    public Object instance(String pattern, String key) {
        Binder binder = Binder.get(environment);
        ConsistencyKitProperties p = binder.bind("consistency-kit", ConsistencyKitProperties.class)
                .orElseGet(ConsistencyKitProperties::new);
        InstanceBuilders.Kind kind = InstanceBuilders.KINDS.stream().filter(k -> k.key().equals(pattern)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no pattern " + pattern));
        ConsistencyKitProperties.Instance own = own(p, pattern).get(key);
        InstanceBuilders.Source source = new InstanceBuilders.Source(binder, pattern, key,
                own != null ? own : BeanUtils.instantiateClass(kind.ownType()));
        return switch (pattern) {
            case "two-phase" -> InstanceBuilders.twoPhase(database(), shared(), source);
            case "job-queue" -> InstanceBuilders.jobQueue(database(), shared(), source, handlers(), jobListener(key));
            case "sync-flag" -> InstanceBuilders.syncFlag(database(), shared(), source);
            case "ledger" -> InstanceBuilders.ledger(database(), shared(), source);
            case "versioning" -> InstanceBuilders.versioning(database(), shared(), source);
            default -> throw new IllegalArgumentException("no pattern " + pattern);
        };
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
