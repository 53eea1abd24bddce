package dev.consistencykit.versioning;

import java.util.Map;
import java.util.Objects;

import org.bson.Document;

/**
 * What changed between two committed versions of a root.
 *
 * @param from    the older version
 * @param to      the newer version
 * @param added   items present in {@code to} only, with their value there
 * @param removed items present in {@code from} only, with their value there
 * @param changed items present in both with different values, with their value in {@code to}
 */
public record VersionDiff(long from, long to, Map<Object, Document> added, Map<Object, Document> removed,
                          Map<Object, Document> changed) {

    /** Copies the maps. */
    public VersionDiff {
        added = Map.copyOf(Objects.requireNonNull(added, "added"));
        removed = Map.copyOf(Objects.requireNonNull(removed, "removed"));
        changed = Map.copyOf(Objects.requireNonNull(changed, "changed"));
    }

    /** Whether both versions have the same items and values. */
    public boolean isEmpty() {
        return added.isEmpty() && removed.isEmpty() && changed.isEmpty();
    }
}
