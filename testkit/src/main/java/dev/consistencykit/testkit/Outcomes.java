package dev.consistencykit.testkit;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * How a simulated process (a task run on its own thread) ended: normally, or with the throwable it died of.
 * The explorer and the chaos runner watch processes from outside, through their {@link Future}s, the way a
 * supervisor watches a process exit; nothing in between catches an {@link InjectedCrash}.
 */
final class Outcomes {

    /** The end of one process. {@code failure} is empty when it ended normally. */
    record Ended(Optional<Throwable> failure, boolean timedOut) {

        boolean crashed() {
            return failure.isPresent() && failure.get() instanceof InjectedCrash;
        }
    }

    private Outcomes() {
    }

    /** Waits for {@code future} at most {@code timeout}. */
    static Ended await(Future<?> future, Duration timeout) throws InterruptedException {
        try {
            future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return new Ended(Optional.empty(), false);
        } catch (ExecutionException e) {
            return new Ended(Optional.of(e.getCause()), false);
        } catch (TimeoutException e) {
            future.cancel(true);
            return new Ended(Optional.of(e), true);
        }
    }

    /** One line describing a failure. */
    static String describe(Throwable t) {
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }
}
