package dev.consistencykit.testkit.contract;

import java.time.Duration;
import java.util.Objects;

/**
 * The result of one server-contract check.
 *
 * @param name    the check's name
 * @param passed  whether the server behaved as the patterns need
 * @param detail  what the check saw
 * @param elapsed how long it took
 */
public record CheckResult(String name, boolean passed, String detail, Duration elapsed) {

    /** Validates the components. */
    public CheckResult {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(detail, "detail");
        Objects.requireNonNull(elapsed, "elapsed");
    }

    @Override
    public String toString() {
        return (passed ? "PASS " : "FAIL ") + name + ": " + detail;
    }
}
