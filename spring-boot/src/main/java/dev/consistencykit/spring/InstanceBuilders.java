package dev.consistencykit.spring;

import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.util.ClassUtils;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.CallObserver;
import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.StrategyBuilder;
import dev.consistencykit.core.StrategyConfig;
import dev.consistencykit.jobqueue.JobHandler;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.jobqueue.JobQueueListener;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerConfig;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncFlagConfig;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.twophase.TwoPhaseConfig;
import dev.consistencykit.versioning.Retention;
import dev.consistencykit.versioning.VersionedStore;
import dev.consistencykit.versioning.VersionedStoreConfig;

/**
 * Each pattern's instance from its properties: every plain setting by its name ({@link InstanceSettings}), then
 * the settings that are not one plain value from the pattern's own properties class. A setting left out keeps the
 * pattern's default; a property the instance does not know fails the start.
 */
final class InstanceBuilders {

    private InstanceBuilders() {
    }

    /**
     * What the application gives every instance: its call observer (observations, when Micrometer's are there) and
     * its {@link Clock} bean, if it has exactly one (else the system clock).
     */
    record Shared(CallObserver observer, Clock clock) {
    }

    /** Where one instance's properties are and what it has beside its settings. */
    record Source(Binder binder, String pattern, String key, ConsistencyKitProperties.Instance own) {

        String prefix() {
            return "consistency-kit." + pattern + "." + key;
        }
    }

    /**
     * One pattern as the starter configures it: its key under {@code consistency-kit}, its package, the simple names of
     * its instances' class, its builder (nested in it) and its configuration, and the class of its instances' own
     * properties. The pattern's classes are named, not referenced: a pattern whose module is absent is skipped.
     */
    record Kind(String key, String packageName, String instance, String config,
                Class<? extends ConsistencyKitProperties.Instance> ownType) {

        /** The fully qualified name of the instances' class. */
        String instanceType() {
            return packageName + "." + instance;
        }

        /** The builder's class (the pattern's module must be present). */
        Class<?> builderType() {
            return ClassUtils.resolveClassName(instanceType() + "$Builder", Kind.class.getClassLoader());
        }

        /** The configuration's class (the pattern's module must be present). */
        @SuppressWarnings("unchecked")
        Class<? extends StrategyConfig> configType() {
            return (Class<? extends StrategyConfig>) ClassUtils.resolveClassName(packageName + "." + config,
                    Kind.class.getClassLoader());
        }
    }

    /** Every pattern, as {@link ConsistencyKitProperties} lists them: what the starter registers and describes. */
    static final List<Kind> KINDS = List.of(
            new Kind("two-phase", "dev.consistencykit.twophase", "TwoPhaseCommit", "TwoPhaseConfig",
                    ConsistencyKitProperties.Instance.class),
            new Kind("job-queue", "dev.consistencykit.jobqueue", "JobQueue", "JobQueueConfig",
                    ConsistencyKitProperties.JobQueue.class),
            new Kind("sync-flag", "dev.consistencykit.syncflag", "SyncFlag", "SyncFlagConfig",
                    ConsistencyKitProperties.SyncFlag.class),
            new Kind("ledger", "dev.consistencykit.logreconciliation", "Ledger", "LedgerConfig",
                    ConsistencyKitProperties.Instance.class),
            new Kind("versioning", "dev.consistencykit.versioning", "VersionedStore", "VersionedStoreConfig",
                    ConsistencyKitProperties.Versioning.class));

    private static <B extends StrategyBuilder<B, ?>> B settings(B builder, Class<? extends StrategyConfig> config,
                                                               Shared shared, Source source) {
        builder.name(source.key()).observer(shared.observer());
        if (shared.clock() != null) {
            builder.clock(shared.clock());
        }
        InstanceSettings.bind(builder, config, source.binder(), source.prefix(), source.own().getClass());
        builder.retryPolicy(source.own().getRetryPolicy().over(RetryPolicy.DEFAULT));
        return builder;
    }

    static TwoPhaseCommit twoPhase(MongoDatabase db, Shared shared, Source source) {
        return settings(TwoPhaseCommit.builder(db), TwoPhaseConfig.class, shared, source).build();
    }

    static JobQueue jobQueue(MongoDatabase db, Shared shared, Source source,
                             Map<String, JobHandler> handlers, JobQueueListener listener) {
        JobQueue.Builder b = settings(JobQueue.builder(db), JobQueueConfig.class, shared, source);
        handlers.forEach(b::handler);
        if (listener != null) {
            b.listener(listener);
        }
        return b.build();
    }

    static SyncFlag syncFlag(MongoDatabase db, Shared shared, Source source) {
        ConsistencyKitProperties.SyncFlag p = (ConsistencyKitProperties.SyncFlag) source.own();
        SyncFlag.Builder b = settings(SyncFlag.builder(db), SyncFlagConfig.class, shared, source);
        if (p.getMasterCollection() != null) {
            b.master(p.getMasterCollection(), p.getMasterFields().toArray(new String[0]));
        }
        for (ConsistencyKitProperties.Target t : p.getTargets()) {
            SyncTarget target = SyncTarget.in(t.getCollection(), t.getIdField());
            if (t.getArrayField() != null) {
                target = target.inArray(t.getArrayField());
            }
            if (t.getVersionField() != null) {
                target = target.versionField(t.getVersionField());
            }
            for (Map.Entry<String, String> copy : t.getCopies().entrySet()) {
                target = target.copy(copy.getKey(), copy.getValue());
            }
            b.target(target);
        }
        return b.build();
    }

    static Ledger ledger(MongoDatabase db, Shared shared, Source source) {
        return settings(Ledger.builder(db), LedgerConfig.class, shared, source).build();
    }

    static VersionedStore versioning(MongoDatabase db, Shared shared, Source source) {
        ConsistencyKitProperties.Versioning p = (ConsistencyKitProperties.Versioning) source.own();
        VersionedStore.Builder b = settings(VersionedStore.builder(db), VersionedStoreConfig.class, shared, source);
        if (p.getKeepLast() != null || p.getKeepNewerThan() != null) {
            b.retention(new Retention(Optional.ofNullable(p.getKeepLast()), Optional.ofNullable(p.getKeepNewerThan())));
        }
        return b.build();
    }
}
