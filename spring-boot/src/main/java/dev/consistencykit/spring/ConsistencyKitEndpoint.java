package dev.consistencykit.spring;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.StrategyStatus;

/**
 * The {@code consistencykit} actuator endpoint: every instance with its counts by state, the oldest in-flight
 * operation's age and its interrupted operations, oldest first, and a job queue's recurring jobs (read); recovery of one instance, and replay, discard
 * or delete of a job queue's dead jobs (writes, secured like every other actuator write). Instances are named by their
 * bean names; a name no instance has answers 404.
 */
@Endpoint(id = "consistencykit")
public final class ConsistencyKitEndpoint {

    /** The most interrupted operations listed per instance. */
    static final int LISTED = 20;

    private final ListableBeanFactory beans;

    ConsistencyKitEndpoint(ListableBeanFactory beans) {
        this.beans = beans;
    }

    /**
     * One instance as the endpoint shows it; {@code recurring} lists a job queue's recurring jobs (empty for the
     * other patterns).
     */
    public record InstanceView(String instance, String pattern, Map<String, Long> counts, long inFlight,
                               String oldestInFlight, List<InterruptedView> interrupted,
                               List<RecurringJobView> recurring) {
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

    /** One instance; 404 for a name no instance has. */
    @ReadOperation
    public WebEndpointResponse<InstanceView> instance(@Selector String name) {
        ConsistencyStrategy<?> instance = instancesByBean().get(name);
        return instance == null ? notFound() : new WebEndpointResponse<>(view(instance));
    }

    /** Recovers every operation of instance {@code name} left unfinished longer than its threshold; 404 if none. */
    @WriteOperation
    public WebEndpointResponse<RecoveryView> recover(@Selector String name) {
        ConsistencyStrategy<?> instance = instancesByBean().get(name);
        if (instance == null) {
            return notFound();
        }
        RecoveryReport r = instance.recover();
        return new WebEndpointResponse<>(new RecoveryView(instance.name(), r.examined(), r.rolledForward(),
                r.rolledBack(), r.skipped(), r.setAside(), r.elapsed().toString()));
    }

    /**
     * What a dead-letter action did; {@code idsNotFound}: the ids the body named when none of them selected a dead job
     * (then the answer is a 404), else empty.
     */
    public record DeadJobsView(String instance, String action, String selection, long jobs, List<String> idsNotFound) {
    }

    /**
     * An operator's action on the dead jobs of job queue {@code name}: {@code replay}, {@code discard} or
     * {@code delete} ({@code POST …/consistencykit/{name}/{action}}), on the jobs the body selects: {@code type},
     * {@code errorContaining}, {@code ids} (one id, or several separated by commas; each as printed anywhere, bare hex
     * for a job enqueued without an id of its own), or {@code all: true} for every one. 404 for a name no job queue has, and for ids of
     * which none selected a dead job (the body names them); 400 for another action or no selection. Each job moves by
     * a compare-and-set on its state: safe while workers run. The same path takes the actions on live jobs by
     * {@code ids}: {@code cancel}, {@code reschedule} (with {@code at}) and {@code rerun}.
     */
    @WriteOperation
    public WebEndpointResponse<DeadJobsView> deadJobs(@Selector String name, @Selector String action,
                                                      @Nullable String type, @Nullable String errorContaining,
                                                      @Nullable Object ids, @Nullable Boolean all,
                                                      @Nullable String at) {
        ConsistencyStrategy<?> instance = instancesByBean().get(name);
        if (instance == null || !JOB_QUEUE.equals(instance.pattern())) {
            return notFound();
        }
        List<String> named = idsOf(ids);
        if (named == null) {
            return new WebEndpointResponse<>(WebEndpointResponse.STATUS_BAD_REQUEST);
        }
        if (LiveJobActions.ACTIONS.contains(action)) {
            return liveJobs(instance, action, named, at);
        }
        if (!List.of("replay", "discard", "delete").contains(action)) {
            return new WebEndpointResponse<>(WebEndpointResponse.STATUS_BAD_REQUEST);
        }
        boolean narrowed = type != null || errorContaining != null || !named.isEmpty();
        if (!narrowed && !Boolean.TRUE.equals(all)) {
            return new WebEndpointResponse<>(WebEndpointResponse.STATUS_BAD_REQUEST);
        }
        try {
            DeadJobActions.Result r = DeadJobActions.apply(instance, action, type, errorContaining, named);
            boolean noneFound = !named.isEmpty() && r.jobs() == 0;
            return new WebEndpointResponse<>(new DeadJobsView(instance.name(), action, r.selection(), r.jobs(),
                    noneFound ? List.copyOf(named) : List.of()), noneFound ? WebEndpointResponse.STATUS_NOT_FOUND
                    : WebEndpointResponse.STATUS_OK);
        } catch (IllegalArgumentException e) {
            return new WebEndpointResponse<>(WebEndpointResponse.STATUS_BAD_REQUEST);
        }
    }

    /**
     * {@code cancel}, {@code reschedule} ({@code at}: an ISO-8601 instant) or {@code rerun} of the jobs {@code ids}
     * names: 400 without ids (or without a readable {@code at}), 404 when it acted on none of them (naming them).
     * The view's {@code selection} lists the jobs it acted on (a rerun's new ids).
     */
    private static WebEndpointResponse<DeadJobsView> liveJobs(ConsistencyStrategy<?> instance, String action,
                                                              List<String> named, String at) {
        if (named.isEmpty()) {
            return new WebEndpointResponse<>(WebEndpointResponse.STATUS_BAD_REQUEST);
        }
        try {
            java.time.Instant when = action.equals("reschedule") ? java.time.Instant.parse(String.valueOf(at)) : null;
            LiveJobActions.Result r = LiveJobActions.apply(instance, action, named, when);
            boolean noneFound = r.jobs().isEmpty();
            return new WebEndpointResponse<>(new DeadJobsView(instance.name(), action, String.join(", ", r.jobs()),
                    r.jobs().size(), r.notFound()), noneFound ? WebEndpointResponse.STATUS_NOT_FOUND
                    : WebEndpointResponse.STATUS_OK);
        } catch (IllegalArgumentException | java.time.DateTimeException e) {
            return new WebEndpointResponse<>(WebEndpointResponse.STATUS_BAD_REQUEST);
        }
    }

    private static final String JOB_QUEUE = "job-queue";

    /**
     * The ids a body names: {@code "ids": "j1"}, or several separated by commas ({@code "ids": "j1, 6b0a…"}), each as
     * printed anywhere. Spring Boot reads an endpoint's JSON body as a map of strings, so a JSON list cannot reach an
     * operation: one string it is (an id holding a comma is selected through the CLI or the API). Null for a value of
     * another shape (the answer is a 400).
     */
    private static List<String> idsOf(Object ids) {
        if (ids == null) {
            return List.of();
        }
        List<String> out = new java.util.ArrayList<>();
        for (Object id : ids instanceof java.util.Collection<?> c ? c : List.of(ids)) {
            if (!(id instanceof String s)) {
                return null;
            }
            out.addAll(com.google.common.base.Splitter.on(',').trimResults().omitEmptyStrings().splitToList(s));
        }
        return out;
    }

    private static <T> WebEndpointResponse<T> notFound() {
        return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
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
                status.inFlight(), status.oldestInFlightAge().map(Duration::toString).orElse(null), interrupted,
                JOB_QUEUE.equals(instance.pattern()) ? RecurringJobViews.of(instance) : List.of());
    }

    private static InterruptedView view(InterruptedOperation op) {
        return new InterruptedView(String.valueOf(op.id()), op.state(), op.age().toString(), op.detail());
    }
}
