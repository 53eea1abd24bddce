package dev.consistencykit.micrometer;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.Maintenance;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

/**
 * Binds consistency-kit to Micrometer. Every meter carries the tags {@code instance} (the instance name) and
 * {@code pattern} (the pattern as the CLI spells it: {@code two-phase}, {@code job-queue}, {@code sync-flag},
 * {@code log-reconciliation}, {@code versioning}), the same tags as the observations of
 * {@link ConsistencyKitObservations}.
 *
 * <ul>
 *   <li>{@link #bind(MeterRegistry, ConsistencyStrategy)}: one function counter per pattern counter, named
 *   {@code consistencykit.<counter>} with the counter's words dot-separated ({@code recoveredForward} becomes
 *   {@code consistencykit.recovered.forward}), read from {@link ConsistencyStrategy#counters()} at each scrape.</li>
 *   <li>{@link #listener(Class, MeterRegistry, String)}: a listener of any pattern's listener interface that counts each
 *   event as {@code consistencykit.events} tagged with {@code event} (the listener method's name); give it to the
 *   pattern's builder.</li>
 *   <li>{@link #bind(MeterRegistry, Maintenance)}: per step, gauges {@code consistencykit.maintenance.lag} (seconds
 *   behind its period) and {@code consistencykit.maintenance.failures} (consecutive failed runs), tagged with
 *   {@code step}.</li>
 * </ul>
 *
 * <pre>{@code
 * TwoPhaseCommit payments = TwoPhaseCommit.builder(db).name("payments")
 *         .listener(ConsistencyKitMeters.listener(TwoPhaseListener.class, registry, "payments")).build();
 * ConsistencyKitMeters.bind(registry, payments);
 * }</pre>
 *
 * <p>As every Micrometer binder, the meters hold the instance and the maintenance weakly: they read them while the
 * application holds them, and read NaN once they are gone, without keeping them alive.
 *
 * <p>Stateless and thread-safe.
 */
public final class ConsistencyKitMeters {

    private static final Pattern CAMEL = Pattern.compile("(?<=[a-z0-9])(?=[A-Z])");

    /** The patterns' listener interfaces, by name (this module depends on none of them), and their patterns. */
    private static final java.util.Map<String, String> PATTERNS_BY_LISTENER = java.util.Map.of(
            "dev.consistencykit.twophase.TwoPhaseListener", "two-phase",
            "dev.consistencykit.jobqueue.JobQueueListener", "job-queue",
            "dev.consistencykit.syncflag.SyncFlagListener", "sync-flag",
            "dev.consistencykit.logreconciliation.LedgerListener", "log-reconciliation",
            "dev.consistencykit.versioning.VersionedStoreListener", "versioning");

    private ConsistencyKitMeters() {
    }

    /** Binds {@code strategy}'s counters to {@code registry}. */
    public static void bind(MeterRegistry registry, ConsistencyStrategy<?> strategy) {
        Objects.requireNonNull(registry, "registry");
        Objects.requireNonNull(strategy, "strategy");
        Tags tags = Tags.of("instance", strategy.name(), "pattern", strategy.pattern());
        for (String counter : strategy.counters().keySet()) {
            FunctionCounter.builder("consistencykit." + dotted(counter), strategy,
                            s -> s.counters().getOrDefault(counter, 0L).doubleValue())
                    .tags(tags).description(counter + " of " + strategy.name()).register(registry);
        }
    }

    /**
     * A listener implementing {@code listenerType} (for example {@code TwoPhaseListener}) that counts every event in
     * {@code consistencykit.events}, tagged with the instance and the event, and for a job's event
     * ({@code onDone}, {@code onFailed}, {@code onDead}, …) with its {@code type}: the outcomes per job type.
     *
     * @throws IllegalArgumentException if {@code listenerType} is not an interface
     */
    public static <L> L listener(Class<L> listenerType, MeterRegistry registry, String instanceName) {
        Objects.requireNonNull(listenerType, "listenerType");
        Objects.requireNonNull(registry, "registry");
        Objects.requireNonNull(instanceName, "instanceName");
        if (!listenerType.isInterface()) {
            throw new IllegalArgumentException(listenerType + " is not a listener interface");
        }
        String pattern = PATTERNS_BY_LISTENER.getOrDefault(listenerType.getName(),
                listenerType.getSimpleName().replace("Listener", ""));
        Object proxy = Proxy.newProxyInstance(listenerType.getClassLoader(), new Class<?>[] {listenerType},
                (self, method, args) -> {
                    if (method.getDeclaringClass() == Object.class) {
                        return objectMethod(self, method, args, listenerType, instanceName);
                    }
                    Tags tags = Tags.of("instance", instanceName, "pattern", pattern, "event", method.getName());
                    if (pattern.equals("job-queue") && args != null && args.length >= 2 && method
                            .getParameterTypes()[0].getSimpleName().equals("OperationId") && args[1] instanceof String t) {
                        tags = tags.and("type", t);   // a job event: per job type (bounded by the registered handlers)
                    }
                    Counter.builder("consistencykit.events").tags(tags).register(registry).increment();
                    return null;
                });
        return listenerType.cast(proxy);
    }

    /** Binds the health of each step of {@code maintenance}. */
    public static void bind(MeterRegistry registry, Maintenance maintenance) {
        Objects.requireNonNull(registry, "registry");
        Objects.requireNonNull(maintenance, "maintenance");
        for (Maintenance.StepHealth step : maintenance.health()) {
            String name = step.name();
            Gauge.builder("consistencykit.maintenance.lag", maintenance, m -> m.health().stream()
                            .filter(h -> h.name().equals(name)).findFirst().map(h -> h.lag().toMillis() / 1000.0)
                            .orElse(0.0))
                    .tags("step", name).baseUnit("seconds").register(registry);
            Gauge.builder("consistencykit.maintenance.failures", maintenance, m -> m.health().stream()
                            .filter(h -> h.name().equals(name)).findFirst().map(h -> (double) h.consecutiveFailures())
                            .orElse(0.0))
                    .tags("step", name).register(registry);
        }
    }

    private static Object objectMethod(Object self, Method method, Object[] args, Class<?> type, String instance) {
        return switch (method.getName()) {
            case "equals" -> self == args[0];
            case "hashCode" -> System.identityHashCode(self);
            default -> "metered " + type.getSimpleName() + " of " + instance;
        };
    }

    private static String dotted(String camel) {
        return CAMEL.matcher(camel).replaceAll(".").toLowerCase(Locale.ROOT);
    }
}
