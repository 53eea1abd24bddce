package dev.consistencykit.versioning;

import dev.consistencykit.core.ConsistencyException;

/**
 * A staged change set was abandoned by recovery before its writer committed it (the writer was paused longer than
 * the staleness threshold, and its documents were incomplete or its base had moved). Nothing of it is visible, and
 * it can never become visible; apply it again to retry.
 */
public class ChangeSetAbandonedException extends ConsistencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param instanceName the store
     * @param changeSetId  the change set
     * @param rootId       its root
     */
    public ChangeSetAbandonedException(String instanceName, Object changeSetId, Object rootId) {
        super(instanceName, changeSetId, "change set on root " + rootId
                + " was abandoned by recovery before it could commit; nothing of it is visible");
    }
}
