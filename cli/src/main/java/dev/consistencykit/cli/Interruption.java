package dev.consistencykit.cli;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Turns SIGINT (Ctrl-C) and SIGTERM (what {@code timeout}, {@code kill} and CI runners send) into an orderly end of
 * the running command. The JVM runs shutdown hooks on both signals; the hook interrupts the command's thread, waits
 * (at most {@link #GRACE_SECONDS} s) until the command has stopped its child processes and printed what it had done,
 * then ends the JVM with {@link ExitCodes#INTERRUPTED}. Commands only react to the thread's interruption, so they behave
 * the same when a test interrupts them.
 */
final class Interruption {

    static final long GRACE_SECONDS = 20;

    private static final AtomicBoolean REQUESTED = new AtomicBoolean();
    private static final CountDownLatch FINISHED = new CountDownLatch(1);
    private static Thread hook;

    private Interruption() {
    }

    /** Installs the hook for the command about to run in {@code command} (the main thread). */
    static synchronized void install(Thread command, Runnable flush) {
        hook = new Thread(() -> {
            REQUESTED.set(true);
            command.interrupt();
            try {
                FINISHED.await(GRACE_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            flush.run();
            Runtime.getRuntime().halt(ExitCodes.INTERRUPTED);
        }, "consistency-kit-interruption");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** Whether a signal asked the command to stop. */
    static boolean requested() {
        return REQUESTED.get();
    }

    /**
     * Ends the JVM once the command returned {@code code}: with that code, or, when a signal arrived meanwhile, by
     * letting the hook end it with {@link ExitCodes#INTERRUPTED}.
     */
    static void exit(int code) {
        synchronized (Interruption.class) {
            if (hook != null && !REQUESTED.get()) {
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                    hook = null;
                } catch (IllegalStateException shutdownInProgress) {
                    // a signal arrived as the command returned: the hook ends the JVM
                }
            }
        }
        if (hook != null) {
            FINISHED.countDown();
            while (true) {
                try {
                    TimeUnit.DAYS.sleep(1);   // the hook halts the JVM
                } catch (InterruptedException e) {
                    // keep waiting for the halt
                }
            }
        }
        System.exit(code);
    }
}
