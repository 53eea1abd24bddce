package dev.consistencykit.core;

import java.util.Objects;
import java.util.Optional;

/**
 * Where a document records which operations have touched it: a <em>pending</em> array that holds the id of every
 * operation applied but not yet settled, and optionally a <em>settled</em> array of tombstones.
 *
 * <p>Without tombstones, a marker that was {@code $pull}ed cannot be told apart from one never pushed, so a late
 * apply by a paused owner would pass the {@code $ne} guard again. With tombstones, settling moves the id from the
 * pending to the settled array, and {@link ConditionalUpdates#applyOnce} refuses an id found in either; a
 * recoverer can also {@link ConditionalUpdates#fence fence} an id that was never applied. Tombstones are
 * pruned by the pattern after a retention period longer than any owner can stay paused, so a document touched by many
 * operations carries a tombstone per operation in that period, and an owner paused for longer is no longer fenced.
 * The patterns use {@link OnceEffects} instead, whose evidence is bounded by the operations in flight and whose guard
 * does not depend on any retention.
 *
 * @param pendingField the array of applied, unsettled operation ids
 * @param settledField the array of settled operation ids (tombstones), if used
 */
public record Marker(String pendingField, Optional<String> settledField) {

    /**
     * @throws InvalidInputException if a field name is not a plain field name
     */
    public Marker {
        Inputs.fieldName(null, "pendingField", pendingField);
        Objects.requireNonNull(settledField, "settledField");
        settledField.ifPresent(f -> Inputs.fieldName(null, "settledField", f));
        if (settledField.isPresent() && settledField.get().equals(pendingField)) {
            throw new IllegalArgumentException("pending and settled fields must differ: " + pendingField);
        }
    }

    /** A marker array without tombstones. */
    public static Marker of(String pendingField) {
        return new Marker(pendingField, Optional.empty());
    }

    /** This marker with a tombstone array. */
    public Marker withTombstones(String settledField) {
        return new Marker(pendingField, Optional.of(settledField));
    }

    /** Whether settled ids are kept as tombstones. */
    public boolean hasTombstones() {
        return settledField.isPresent();
    }
}
