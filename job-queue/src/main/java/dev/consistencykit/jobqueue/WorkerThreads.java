package dev.consistencykit.jobqueue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The kind of thread a {@link JobWorkers} pool runs its workers on ({@link JobQueue#startWorkers(int, WorkerThreads)}):
 * platform threads, or virtual threads, which let a pool of many workers wait on the server without a thread each.
 * Workers claim, run and record the same way on either; the pool's heartbeats and firing of schedules stay on platform
 * threads of their own.
 */
public enum WorkerThreads {
    /** Daemon platform threads named {@code <queue>-worker-<n>}. */
    PLATFORM,
    /** Virtual threads named {@code <queue>-worker-<n>}: Java 21 or later. */
    VIRTUAL;

    /** Whether this runtime has virtual threads (Java 21 or later). */
    public static boolean virtualAvailable() {
        return OF_VIRTUAL != null;
    }

    /**
     * The thread factory of this kind for the workers of queue {@code name}.
     *
     * @throws UnsupportedOperationException for {@link #VIRTUAL} on a runtime before Java 21
     */
    ThreadFactory factory(String name) {
        if (this == PLATFORM) {
            AtomicLong count = new AtomicLong();
            return r -> {
                Thread t = new Thread(r, name + "-worker-" + count.getAndIncrement());
                t.setDaemon(true);
                return t;
            };
        }
        if (OF_VIRTUAL == null) {
            throw new UnsupportedOperationException("virtual worker threads need Java 21 or later; this runtime is "
                    + Runtime.version().feature() + ": use WorkerThreads.PLATFORM");
        }
        try {
            Object builder = OF_VIRTUAL.invoke(null);
            builder = NAME.invoke(builder, name + "-worker-", 0L);
            return (ThreadFactory) FACTORY.invoke(builder);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException("could not make virtual threads", e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("could not make virtual threads", e);
        }
    }

    /** {@code Thread.ofVirtual()}, {@code Thread.Builder.name(String, long)}, {@code .factory()}: Java 21 on. */
    private static final Method OF_VIRTUAL;
    private static final Method NAME;
    private static final Method FACTORY;

    static {
        Method ofVirtual = null;
        Method named = null;
        Method factory = null;
        try {
            Class<?> builder = Class.forName("java.lang.Thread$Builder");
            ofVirtual = Thread.class.getMethod("ofVirtual");
            named = builder.getMethod("name", String.class, long.class);
            factory = builder.getMethod("factory");
        } catch (ReflectiveOperationException e) {
            ofVirtual = null;   // before Java 21: no virtual threads
        }
        OF_VIRTUAL = ofVirtual;
        NAME = named;
        FACTORY = factory;
    }
}
