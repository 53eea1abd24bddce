package dev.consistencykit.versioning;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

import dev.consistencykit.core.spi.Checks;

/**
 * How much history {@link VersionedStore#prune()} keeps per root. The current version is always kept; time travel to
 * an older version than the kept ones answers {@link VersionPrunedException}.
 *
 * @param keepLast  keep the last this many committed versions, if set
 * @param newerThan keep the versions committed within this long (server time), if set
 */
public record Retention(Optional<Integer> keepLast, Optional<Duration> newerThan) {

    /** Everything, forever (the default). */
    public static final Retention KEEP_ALL = new Retention(Optional.empty(), Optional.empty());

    /**
     * @throws IllegalArgumentException if {@code keepLast < 1} or {@code newerThan} is negative, or both are set
     */
    public Retention {
        Objects.requireNonNull(keepLast, "keepLast");
        Objects.requireNonNull(newerThan, "newerThan");
        keepLast.ifPresent(k -> {
            Checks.atLeast("keepLast", k, 1);
        });
        newerThan.ifPresent(d -> {
            Checks.notNegative("newerThan", d);
        });
        if (keepLast.isPresent() && newerThan.isPresent()) {
            throw new IllegalArgumentException("choose keepLast or newerThan, not both");
        }
    }

    /** Keep the last {@code versions} committed versions of each root. */
    public static Retention keepLast(int versions) {
        return new Retention(Optional.of(versions), Optional.empty());
    }

    /** Keep the versions committed within {@code age} (and always the current one). */
    public static Retention newerThan(Duration age) {
        return new Retention(Optional.empty(), Optional.of(Objects.requireNonNull(age, "age")));
    }

    /** Whether this keeps everything. */
    public boolean keepsAll() {
        return keepLast.isEmpty() && newerThan.isEmpty();
    }
}
