package dev.consistencykit.twophase;

import java.time.Duration;

import dev.consistencykit.core.RetryPolicy;

final class TestPolicies {

    /** Retries as the default does, without making tests wait. */
    static final RetryPolicy FAST_RETRY = RetryPolicy.DEFAULT.withBackoff(Duration.ofMillis(1), Duration.ofMillis(4));

    private TestPolicies() {
    }
}
