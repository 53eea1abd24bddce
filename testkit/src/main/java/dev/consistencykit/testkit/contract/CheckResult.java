package dev.consistencykit.testkit.contract;

import java.time.Duration;
import java.util.Objects;

/**
 * The result of one server-contract check.
 *
 * @param name    the check's name
 * @param passed  whether the server behaved as the patterns need (true too when the check could not run here)
 * @param detail  what the check saw, or why it could not run
 * @param elapsed how long it took
 * @param skipped whether the check could not run on this server (a sharding check where nothing can be sharded)
 */
public record CheckResult(String name, boolean passed, String detail, Duration elapsed, boolean skipped) {

    /** Validates the components. */
    public CheckResult {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(detail, "detail");
        Objects.requireNonNull(elapsed, "elapsed");
    }

    /** A check that ran. */
    public CheckResult(String name, boolean passed, String detail, Duration elapsed) {
        this(name, passed, detail, elapsed, false);
    }

    /** {@code PASS}, {@code FAIL} or {@code SKIP}. */
    public String verdict() {
        return skipped ? "SKIP" : passed ? "PASS" : "FAIL";
    }

    @Override
    public String toString() {
        return verdict() + " " + name + ": " + detail;
    }
}
