package dev.consistencykit.versioning;

import dev.consistencykit.core.OperationId;

/** Hooks called as change sets are staged, committed and abandoned. No-op defaults; a listener's exception is ignored. */
public interface VersionedStoreListener {

    /** A change set was staged on {@code rootId} as a candidate for {@code version}. */
    default void onStaged(Object rootId, OperationId changeSet, long version) {
    }

    /** A change set was committed as {@code version}; {@code byRecovery} when a recoverer finished it. */
    default void onCommitted(Object rootId, OperationId changeSet, long version, boolean byRecovery) {
    }

    /** A change set lost: its base {@code baseVersion} is no longer the root's version {@code currentVersion}. */
    default void onConflict(Object rootId, OperationId changeSet, long baseVersion, long currentVersion) {
    }

    /** A staged change set was abandoned (its documents are being deleted) for {@code reason}. */
    default void onAbandoned(Object rootId, OperationId changeSet, String reason) {
    }

    /** Maintenance settled {@code versions} versions, deleted {@code abandonedDocuments} and {@code prunedDocuments}. */
    default void onMaintained(Object rootId, int versions, long abandonedDocuments, long prunedDocuments) {
    }
}
