package dev.consistencykit.versioning;

import java.util.Objects;
import java.util.Optional;

import org.bson.Document;

/**
 * One committed version of one item, as {@link VersionedStore#history} lists it.
 *
 * @param itemId      the item
 * @param version     the root version that committed it
 * @param value       its value; empty when this version deleted it
 * @param changeSetId the id of the change set that wrote it
 */
public record ItemVersion(Object itemId, long version, Optional<Document> value, Object changeSetId) {

    /** Validates the components. */
    public ItemVersion {
        Objects.requireNonNull(itemId, "itemId");
        Objects.requireNonNull(value, "value");
    }

    /** Whether this version deleted the item. */
    public boolean deleted() {
        return value.isEmpty();
    }
}
