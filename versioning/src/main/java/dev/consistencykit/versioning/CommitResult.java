package dev.consistencykit.versioning;

import java.util.Objects;

import dev.consistencykit.core.OperationId;

/**
 * A committed change set.
 *
 * @param rootId      its root
 * @param changeSetId its id
 * @param version     the version it committed as
 */
public record CommitResult(Object rootId, OperationId changeSetId, long version) {

    /** Validates the components. */
    public CommitResult {
        Objects.requireNonNull(rootId, "rootId");
        Objects.requireNonNull(changeSetId, "changeSetId");
    }
}
