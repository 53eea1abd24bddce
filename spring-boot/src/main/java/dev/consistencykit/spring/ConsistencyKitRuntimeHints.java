package dev.consistencykit.spring;

import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;
import org.springframework.util.ClassUtils;

/**
 * What the starter and the patterns reach by reflection, declared for Spring's ahead-of-time processing (a native
 * image keeps only what is declared; on the JVM the hints change nothing): every pattern's builder, whose setters
 * {@link InstanceSettings} finds by name and calls; its configuration, whose fields are its settings
 * ({@code StrategyConfig}, and {@link SettingsMetadata}'s defaults); the factory method of the instances' beans; the
 * driver's version that {@code DriverFloor} reads and the class it looks for; and the virtual-thread builder the job
 * queue's workers find on Java 21 and later. The properties' own classes are declared by Boot, as every
 * {@code @ConfigurationProperties} class is.
 */
final class ConsistencyKitRuntimeHints implements RuntimeHintsRegistrar {

    @Override
    public void registerHints(RuntimeHints hints, ClassLoader classLoader) {
        ClassLoader loader = classLoader != null ? classLoader : getClass().getClassLoader();
        for (InstanceBuilders.Kind kind : InstanceBuilders.KINDS) {
            if (!ClassUtils.isPresent(kind.instanceType(), loader)) {
                continue;
            }
            hints.reflection().registerType(kind.builderType(), MemberCategory.INVOKE_PUBLIC_METHODS);
            hints.reflection().registerType(kind.configType(), MemberCategory.ACCESS_DECLARED_FIELDS,
                    MemberCategory.INVOKE_DECLARED_CONSTRUCTORS);
            hints.reflection().registerType(dev.consistencykit.core.StrategyConfig.class,
                    MemberCategory.ACCESS_DECLARED_FIELDS);
        }
        hints.reflection().registerType(ConsistencyKitInstances.class, MemberCategory.INVOKE_PUBLIC_METHODS);
        hints.reflection().registerType(TypeReference.of("com.mongodb.internal.build.MongoDriverVersion"),
                MemberCategory.ACCESS_PUBLIC_FIELDS);
        hints.reflection().registerType(TypeReference.of("com.mongodb.MongoOperationTimeoutException"));
        hints.reflection().registerType(Thread.class, MemberCategory.INVOKE_PUBLIC_METHODS);
        hints.reflection().registerType(TypeReference.of("java.lang.Thread$Builder"),
                MemberCategory.INVOKE_PUBLIC_METHODS);
    }
}
