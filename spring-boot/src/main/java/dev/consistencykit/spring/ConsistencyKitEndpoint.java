package dev.consistencykit.spring;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.StrategyStatus;

/**
 * The {@code consistencykit} actuator endpoint: every instance with its counts by state, the oldest in-flight
 * operation's age and its interrupted operations, oldest first (read); and recovery of one instance (write, secured
 * like every other actuator write). Instances are named by their bean names.
 */
@Endpoint(id = "consistencykit")
public final class ConsistencyKitEndpoint {

    /** The most interrupted operations listed per instance. */
    static final int LISTED = 20;

    private final ListableBeanFactory beans;

    ConsistencyKitEndpoint(ListableBeanFactory beans) {
        this.beans = beans;
    }

    /** One instance as the endpoint shows it. */
    public record InstanceView(String instance, String pattern, Map<String, Long> counts, long inFlight,
                               String oldestInFlight, List<InterruptedView> interrupted) {
    }

    /** One interrupted operation. */
    public record InterruptedView(String id, String state, String age, String detail) {
    }

    /** One recovery pass, as it ended. */
    public record RecoveryView(String instance, int examined, int rolledForward, int rolledBack, int skipped,
                               int setAside, String took) {
    }

    /** Every instance, by bean name. */
    @ReadOperation
    public Map<String, InstanceView> instances() {
        Map<String, InstanceView> out = new LinkedHashMap<>();
        instancesByBean().forEach((bean, instance) -> out.put(bean, view(instance)));
        return out;
    }

    /** One instance. */
    @ReadOperation
    public InstanceView instance(@Selector String name) {
        ConsistencyStrategy<?> instance = instancesByBean().get(name);
        return instance == null ? null : view(instance);
    }

    /** Recovers every operation of instance {@code name} left unfinished longer than its threshold. */
    @WriteOperation
    public RecoveryView recover(@Selector String name) {
        ConsistencyStrategy<?> instance = instancesByBean().get(name);
        if (instance == null) {
            return null;
        }
        RecoveryReport r = instance.recover();
        return new RecoveryView(instance.name(), r.examined(), r.rolledForward(), r.rolledBack(), r.skipped(),
                r.setAside(), r.elapsed().toString());
    }

    private Map<String, ConsistencyStrategy<?>> instancesByBean() {
        Map<String, ConsistencyStrategy<?>> out = new LinkedHashMap<>();
        beans.getBeansOfType(ConsistencyStrategy.class).forEach(out::put);
        return out;
    }

    private static InstanceView view(ConsistencyStrategy<?> instance) {
        StrategyStatus status = instance.status();
        List<InterruptedView> interrupted = instance.interrupted(Duration.ZERO, LISTED).stream()
                .map(ConsistencyKitEndpoint::view).toList();
        return new InstanceView(instance.name(), instance.pattern(), status.countsByState(),
                status.inFlight(), status.oldestInFlightAge().map(Duration::toString).orElse(null), interrupted);
    }

    private static InterruptedView view(InterruptedOperation op) {
        return new InterruptedView(String.valueOf(op.id()), op.state(), op.age().toString(), op.detail());
    }
}
