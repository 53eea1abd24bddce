package dev.consistencykit.cli;

import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Ends a child process when the process that started it is gone, however it went (SIGKILL included, which no hook
 * sees): the soak's server and workers never outlive the soak. Polls the parent's handle, which identifies that very
 * process (start time included), so a re-parented child does not mistake its new parent for the old one.
 */
final class ParentWatch {

    private ParentWatch() {
    }

    /**
     * Watches process {@code parentPid}, named by the parent itself: asking for this process's parent would name
     * {@code init} when the parent died while this JVM was starting.
     */
    static void start(long parentPid) {
        Optional<ProcessHandle> parent = ProcessHandle.of(parentPid);
        if (parent.isEmpty() || !parent.get().isAlive()) {
            Runtime.getRuntime().halt(ExitCodes.INTERRUPTED);
        }
        ProcessHandle watched = parent.get();
        Thread watch = new Thread(() -> {
            while (watched.isAlive()) {
                try {
                    TimeUnit.MILLISECONDS.sleep(500);
                } catch (InterruptedException e) {
                    return;
                }
            }
            Runtime.getRuntime().halt(ExitCodes.INTERRUPTED);
        }, "consistency-kit-parent-watch");
        watch.setDaemon(true);
        watch.start();
    }
}
