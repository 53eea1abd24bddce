package dev.consistencykit.versioning;

import dev.consistencykit.core.ConsistencyException;

/** Time travel to a version older than the root's retention keeps: that version's state is gone. */
public class VersionPrunedException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    private final long version;
    private final long oldestKept;

    /**
     * @param instanceName the store
     * @param rootId       the root
     * @param version      the version asked for
     * @param oldestKept   the oldest version still answerable
     */
    public VersionPrunedException(String instanceName, Object rootId, long version, long oldestKept) {
        super(instanceName, rootId, "version " + version + " is pruned; the oldest version kept is " + oldestKept);
        this.version = version;
        this.oldestKept = oldestKept;
    }

    /** The version asked for. */
    public long version() {
        return version;
    }

    /** The oldest version still answerable. */
    public long oldestKept() {
        return oldestKept;
    }
}
