package dev.consistencykit.versioning;

import dev.consistencykit.core.ConsistencyException;

/**
 * A change set's base version is no longer its root's committed version: another change set was committed first.
 * Nothing of this change set is visible. Re-read the tree and make the change again (or use
 * {@link VersionedStore#update}, which does).
 */
public class VersionConflictException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    private final transient Object rootId;
    private final long baseVersion;
    private final long currentVersion;

    /**
     * @param instanceName   the store
     * @param changeSetId    the change set that lost
     * @param rootId         its root
     * @param baseVersion    the version it was made from
     * @param currentVersion the root's committed version now
     */
    public VersionConflictException(String instanceName, Object changeSetId, Object rootId, long baseVersion,
                                    long currentVersion) {
        super(instanceName, changeSetId, "change set on root " + rootId + " is based on version " + baseVersion
                + " but the root is at version " + currentVersion + ": re-read and apply it again");
        this.rootId = rootId;
        this.baseVersion = baseVersion;
        this.currentVersion = currentVersion;
    }

    /** The root. */
    public Object rootId() {
        return rootId;
    }

    /** The version the change set was made from. */
    public long baseVersion() {
        return baseVersion;
    }

    /** The root's committed version when the conflict was found. */
    public long currentVersion() {
        return currentVersion;
    }
}
