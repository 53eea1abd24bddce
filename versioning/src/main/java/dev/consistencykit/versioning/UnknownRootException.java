package dev.consistencykit.versioning;

import dev.consistencykit.core.ConsistencyException;

/** There is no root with this id: create it with {@link VersionedStore#createRoot}. Nothing was written. */
public class UnknownRootException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param instanceName the store
     * @param rootId       the missing root
     */
    public UnknownRootException(String instanceName, Object rootId) {
        super(instanceName, rootId, "no such root");
    }
}
