package dev.consistencykit.versioning;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

import org.bson.Document;

/**
 * One committed version of a root, as {@link VersionedStore#versions} lists it.
 *
 * @param version     the version
 * @param changeSetId the change set committed as this version
 * @param items       how many puts and deletes it made
 * @param committedAt when it was committed (server time)
 * @param meta        the document stored with its commit, if any
 */
public record VersionInfo(long version, Object changeSetId, int items, Optional<Instant> committedAt,
                          Optional<Document> meta) {

    /** Validates the components. */
    public VersionInfo {
        Objects.requireNonNull(committedAt, "committedAt");
        Objects.requireNonNull(meta, "meta");
    }
}
