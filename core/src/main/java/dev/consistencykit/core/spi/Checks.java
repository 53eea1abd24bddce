package dev.consistencykit.core.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * The checks every builder and config applies to its settings, in one place: each throws
 * {@link IllegalArgumentException} naming the setting and the value it was given ({@code staleAfter must be >= 0, was
 * PT-1S}), and {@link NullPointerException} for a missing one.
 */
public final class Checks {

    private Checks() {
    }

    /** {@code value}, if it is zero or positive. */
    public static Duration notNegative(String setting, Duration value) {
        Objects.requireNonNull(value, setting);
        if (value.isNegative()) {
            throw new IllegalArgumentException(setting + " must be >= 0, was " + value);
        }
        return value;
    }

    /** {@code value}, if it is positive. */
    public static Duration positive(String setting, Duration value) {
        Objects.requireNonNull(value, setting);
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(setting + " must be > 0, was " + value);
        }
        return value;
    }

    /** {@code value}, if it is at least {@code min}. */
    public static int atLeast(String setting, int value, int min) {
        if (value < min) {
            throw new IllegalArgumentException(setting + " must be >= " + min + ", was " + value);
        }
        return value;
    }
}
