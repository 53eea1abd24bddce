package dev.consistencykit.dashboard;

import java.time.Duration;
import java.util.Objects;

import dev.consistencykit.core.spi.Checks;

/**
 * How a {@link Dashboard} behaves: read-only unless actions are enabled, and then only for a request that carries the
 * token. A {@link Dashboard} copies its settings when it is made.
 */
public final class DashboardSettings {

    private boolean actionsEnabled;
    private String token;
    private Duration staleAfter = Duration.ofMinutes(1);
    private Duration refreshEvery = Duration.ofSeconds(2);

    /** Whether the page may recover instances and operations and replay dead jobs (default: no, read-only). */
    public boolean actionsEnabled() {
        return actionsEnabled;
    }

    /** See {@link #actionsEnabled()}. */
    public DashboardSettings actionsEnabled(boolean value) {
        this.actionsEnabled = value;
        return this;
    }

    /**
     * The secret an action's request must carry (header {@value Dashboard#TOKEN_HEADER}); {@code null} for none,
     * which {@link Dashboard} accepts only while actions are off.
     */
    public String token() {
        return token;
    }

    /** See {@link #token()}. */
    public DashboardSettings token(String value) {
        if (value != null && value.length() < 16) {
            throw new IllegalArgumentException("the dashboard's token must have at least 16 characters");
        }
        this.token = value;
        return this;
    }

    /**
     * How long an operation must have made no progress to be shown as interrupted, and what the page's recovery
     * actions take over (default one minute).
     */
    public Duration staleAfter() {
        return staleAfter;
    }

    /** See {@link #staleAfter()}. */
    public DashboardSettings staleAfter(Duration value) {
        this.staleAfter = Checks.notNegative("staleAfter", Objects.requireNonNull(value, "staleAfter"));
        return this;
    }

    /** How often the page polls the API (default two seconds). */
    public Duration refreshEvery() {
        return refreshEvery;
    }

    /** See {@link #refreshEvery()}. */
    public DashboardSettings refreshEvery(Duration value) {
        this.refreshEvery = Checks.positive("refreshEvery", Objects.requireNonNull(value, "refreshEvery"));
        return this;
    }

    DashboardSettings copy() {
        DashboardSettings c = new DashboardSettings();
        c.actionsEnabled = actionsEnabled;
        c.token = token;
        c.staleAfter = staleAfter;
        c.refreshEvery = refreshEvery;
        return c;
    }
}
