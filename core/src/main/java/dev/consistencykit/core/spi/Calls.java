package dev.consistencykit.core.spi;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

import com.mongodb.MongoException;
import com.mongodb.MongoInterruptedException;
import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.client.MongoCollection;

import dev.consistencykit.core.CallObserver;
import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.ForeignRecordException;
import dev.consistencykit.core.OperationInterruptedException;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.OutcomeUnknownException;
import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.ServerRefusedException;
import dev.consistencykit.core.ServerUnavailableException;

/**
 * The boundary every public method of a pattern crosses: one place that gives each call a deadline, types every
 * error, and applies one interruption policy.
 *
 * <ul>
 *   <li><b>Deadline.</b> A call gets {@link #operationTimeout()} from its start; every driver operation is bounded by
 *   the driver's client-side operation timeout (set on the database by the builder), and {@link RetryPolicy} does not
 *   start a retry the deadline cannot hold.</li>
 *   <li><b>No raw driver exception.</b> A transient error that outlived the retries is a
 *   {@link ServerUnavailableException} (nothing was sent) or an {@link OutcomeUnknownException} (a write may have
 *   been applied); a permanent one a {@link ServerRefusedException}; a closed client a
 *   {@link ServerUnavailableException}; each with the driver's exception as the cause.</li>
 *   <li><b>Interruption.</b> The thread's interrupt flag is restored and an {@link OperationInterruptedException}
 *   naming the instance is thrown.</li>
 *   <li><b>Diagnostics.</b> The SLF4J MDC holds {@code ck.instance} and {@code ck.operation} for the call.</li>
 * </ul>
 *
 * <p>Immutable and thread-safe.
 */
public final class Calls {

    /** The default bound of one public call: {@value #DEFAULT_OPERATION_TIMEOUT_SECONDS} s. */
    public static final long DEFAULT_OPERATION_TIMEOUT_SECONDS = 30;

    /** {@link #DEFAULT_OPERATION_TIMEOUT_SECONDS} as a duration. */
    public static final Duration DEFAULT_OPERATION_TIMEOUT = Duration.ofSeconds(DEFAULT_OPERATION_TIMEOUT_SECONDS);

    /** The MDC key holding the instance name during a call. */
    public static final String MDC_INSTANCE = "ck.instance";

    /** The MDC key holding what the call does (and its operation id, if it has one). */
    public static final String MDC_OPERATION = "ck.operation";

    /** Set while a call of this thread is observed: the calls it makes are part of it. */
    private static final ThreadLocal<Boolean> OBSERVED = new ThreadLocal<>();
    private static final Logger LOG = LoggerFactory.getLogger(Calls.class);

    private final String instanceName;
    private final RetryPolicy retryPolicy;
    private final Duration operationTimeout;
    private final String pattern;
    private final CallObserver observer;

    /**
     * @param instanceName     for errors, log lines and the MDC
     * @param retryPolicy      how a whole idempotent call is retried
     * @param operationTimeout the bound of one call, > 0
     */
    public Calls(String instanceName, RetryPolicy retryPolicy, Duration operationTimeout) {
        this(instanceName, retryPolicy, operationTimeout, instanceName, CallObserver.NONE);
    }

    /**
     * @param instanceName     for errors, log lines and the MDC
     * @param retryPolicy      how a whole idempotent call is retried
     * @param operationTimeout the bound of one call, > 0
     * @param pattern          the pattern, for the observer
     * @param observer         sees each outermost call begin and end
     */
    public Calls(String instanceName, RetryPolicy retryPolicy, Duration operationTimeout, String pattern,
                 CallObserver observer) {
        this.pattern = Objects.requireNonNull(pattern, "pattern");
        this.observer = Objects.requireNonNull(observer, "observer");
        this.instanceName = Objects.requireNonNull(instanceName, "instanceName");
        this.retryPolicy = Objects.requireNonNull(retryPolicy, "retryPolicy");
        this.operationTimeout = Objects.requireNonNull(operationTimeout, "operationTimeout");
        Checks.positive("operationTimeout", operationTimeout);
    }

    /** The pattern whose calls these are, as its default instance name spells it. */
    public String pattern() {
        return pattern;
    }

    /** The bound of one public call. */
    public Duration operationTimeout() {
        return operationTimeout;
    }

    /**
     * Runs one operation (it writes; its own steps retry where each is safe to repeat): errors typed, deadline set,
     * interruption handled.
     *
     * @param what        what the call does, for messages and the MDC
     * @param operationId the operation or document concerned, may be {@code null}
     */
    public <T> T operation(String what, Object operationId, Supplier<T> body) {
        return guarded(what, operationId, body, true, true);
    }

    /**
     * Runs an operation that runs the application's own code for as long as it needs (a job's handler): errors
     * typed, interruption handled, MDC set, and every server call bounded by the operation timeout, but no deadline
     * for the whole call, so that a long handler does not leave its completion without retries.
     */
    public <T> T applicationCode(String what, Object operationId, Supplier<T> body) {
        return guarded(what, operationId, body, true, false);
    }

    /**
     * {@link #operation}, for a call that sends work on (a job enqueued): observed as sending, so that
     * {@link #carried()} within it gives what continues it where the work is done.
     */
    public <T> T sending(String what, Object operationId, Supplier<T> body) {
        return guarded(what, operationId, body, true, true, Kind.SENDING, java.util.Map.of());
    }

    /**
     * {@link #applicationCode}, for the work a sending call sent, continuing what that call {@code carried}.
     */
    public <T> T applicationCode(String what, Object operationId, java.util.Map<String, String> carried,
                                 Supplier<T> body) {
        return guarded(what, operationId, body, true, false, carried.isEmpty() ? Kind.PLAIN : Kind.RECEIVING,
                carried);
    }

    /**
     * What the sending call observed in this thread hands on to the work it sends ({@link CallObserver#carried});
     * empty outside one, or when the observer fails.
     */
    public java.util.Map<String, String> carried() {
        try {
            return observer.carried();
        } catch (RuntimeException e) {
            LOG.warn("[{}] the call observer failed to say what a call carries: {}", instanceName,
                    Throwables.describe(e));
            return java.util.Map.of();
        }
    }

    /** {@link #operation(String, Object, Supplier)} without a result. */
    public void operation(String what, Object operationId, Runnable body) {
        guarded(what, operationId, () -> {
            body.run();
            return null;
        }, true, true);
    }

    /**
     * Runs an idempotent call (a read, a recovery pass, a maintenance step): retried whole on transient errors within
     * the deadline, errors typed, interruption handled.
     */
    public <T> T idempotent(String what, Supplier<T> body) {
        return guarded(what, null, () -> retryPolicy.execute(instanceName, null, what, body), false, true);
    }

    /** {@link #idempotent(String, Supplier)} without a result. */
    public void idempotent(String what, Runnable body) {
        idempotent(what, () -> {
            body.run();
            return null;
        });
    }

    /**
     * Runs a read that keeps its own bound (a settled read waiting for in-flight operations): not retried whole,
     * errors typed as for a read, interruption handled.
     */
    public <T> T read(String what, Supplier<T> body) {
        return guarded(what, null, body, false, true);
    }

    /** How a call is observed: as any call, as one that sends work on, as the work one sent. */
    private enum Kind { PLAIN, SENDING, RECEIVING }

    private <T> T guarded(String what, Object operationId, Supplier<T> body, boolean writes, boolean deadline) {
        return guarded(what, operationId, body, writes, deadline, Kind.PLAIN, java.util.Map.of());
    }

    private <T> T guarded(String what, Object operationId, Supplier<T> body, boolean writes, boolean deadline,
                          Kind kind, java.util.Map<String, String> carried) {
        if (observer == CallObserver.NONE || OBSERVED.get() != null) {
            return typed(what, operationId, body, writes, deadline);
        }
        CallObserver.Observed observed = CallObserver.Observed.NONE;
        try {
            observed = switch (kind) {
                case PLAIN -> observer.start(pattern, instanceName, what);
                case SENDING -> observer.startSending(pattern, instanceName, what);
                case RECEIVING -> observer.startReceiving(pattern, instanceName, what, carried);
            };
        } catch (RuntimeException e) {
            LOG.warn("[{}] the call observer failed to start '{}': {}", instanceName, what,
                    Throwables.describe(e));
        }
        OBSERVED.set(Boolean.TRUE);
        String outcome = "error";
        RuntimeException failure = null;
        try {
            T result = typed(what, operationId, body, writes, deadline);
            outcome = outcomeOf(result);
            return result;
        } catch (RuntimeException e) {
            failure = e;
            throw e;
        } finally {
            OBSERVED.remove();
            try {
                observed.end(outcome, failure);
            } catch (RuntimeException e) {
                LOG.warn("[{}] the call observer failed to end '{}': {}", instanceName, what,
                        Throwables.describe(e));
            }
        }
    }

    /** The low-cardinality outcome of a call that answered {@code result}. */
    static String outcomeOf(Object result) {
        Object answer = result instanceof java.util.Optional<?> o ? o.orElse(null) : result;
        if (answer instanceof OperationResult r) {
            return r.outcome().name().toLowerCase(java.util.Locale.ROOT);
        }
        return result instanceof java.util.Optional<?> o && o.isEmpty() ? "empty" : "success";
    }

    private <T> T typed(String what, Object operationId, Supplier<T> body, boolean writes, boolean deadline) {
        boolean outermost = deadline && !Deadline.isSet();
        String previousInstance = MDC.get(MDC_INSTANCE);
        String previousOperation = MDC.get(MDC_OPERATION);
        if (outermost) {
            Deadline.setIn(operationTimeout.toNanos());
        }
        MDC.put(MDC_INSTANCE, instanceName);
        MDC.put(MDC_OPERATION, operationId == null ? what : what + " " + Values.show(operationId));
        try {
            return body.get();
        } catch (MongoInterruptedException e) {
            throw interrupted(what, operationId, e);
        } catch (MongoOperationTimeoutException e) {
            throw timedOut(what, operationId, writes, e);
        } catch (MongoException e) {
            throw typed(what, operationId, writes, e);
        } catch (IllegalStateException e) {
            if (isDriver(e)) {
                throw new ServerUnavailableException(instanceName, operationId, what + ": the client cannot send ("
                        + e.getMessage() + "); was it closed?", e);
            }
            throw e;
        } catch (ClassCastException | org.bson.BsonInvalidOperationException e) {
            throw new ForeignRecordException(instanceName, operationId, what + ": a record read back holds a value"
                    + " of another type than this pattern writes there (" + e + ")", e);
        } finally {
            if (outermost) {
                Deadline.clear();
            }
            restore(MDC_INSTANCE, previousInstance);
            restore(MDC_OPERATION, previousOperation);
        }
    }

    private OperationInterruptedException interrupted(String what, Object operationId, Exception e) {
        Thread.currentThread().interrupt();
        return new OperationInterruptedException(instanceName, operationId, what + ": interrupted", e);
    }

    private ConsistencyException timedOut(String what, Object operationId, boolean writes, MongoException e) {
        String bound = " within the operation timeout of " + operationTimeout.toMillis() + " ms";
        if (writes) {
            return new OutcomeUnknownException(instanceName, operationId, what + ": no answer" + bound
                    + "; a write may or may not have been applied: retry with the same id, or let recovery finish"
                    + " it", e);
        }
        return new ServerUnavailableException(instanceName, operationId, what + ": no answer" + bound, e);
    }

    private ConsistencyException typed(String what, Object operationId, boolean writes, MongoException e) {
        return switch (MongoErrors.classify(e)) {
            case TRANSIENT_NOT_SENT -> new ServerUnavailableException(instanceName, operationId, what
                    + ": server unavailable (" + e.getClass().getSimpleName() + ")", e);
            case CONFLICT -> new ServerUnavailableException(instanceName, operationId, what
                    + ": refused by a concurrent writer; nothing was written by it", e);
            case TRANSIENT_MAYBE_APPLIED -> writes
                    ? new OutcomeUnknownException(instanceName, operationId, what + ": the server did not confirm ("
                    + e.getClass().getSimpleName() + "); a write may or may not have been applied: retry with the"
                    + " same id, or let recovery finish it", e)
                    : new ServerUnavailableException(instanceName, operationId, what + ": no answer ("
                    + e.getClass().getSimpleName() + ")", e);
            default -> new ServerRefusedException(instanceName, operationId, what + ": the server refused it: "
                    + e.getMessage(), e);
        };
    }

    private static boolean isDriver(IllegalStateException e) {
        StackTraceElement[] trace = e.getStackTrace();
        return trace.length > 0 && trace[0].getClassName().startsWith("com.mongodb.");
    }

    private static void restore(String key, String value) {
        if (value == null) {
            MDC.remove(key);
        } else {
            MDC.put(key, value);
        }
    }

    /**
     * A collection the application passed in, with an operation timeout no longer than {@code bound}: its own when
     * it has a shorter one, else {@code bound}. Patterns write to such collections (a business collection, an effect's
     * target) within the same deadline as to their own.
     */
    public static <T> MongoCollection<T> bounded(MongoCollection<T> collection, Duration bound) {
        Objects.requireNonNull(collection, "collection");
        Long own = collection.getTimeout(TimeUnit.MILLISECONDS);
        return own != null && own > 0 && own <= bound.toMillis() ? collection
                : collection.withTimeout(bound.toMillis(), TimeUnit.MILLISECONDS);
    }
}
