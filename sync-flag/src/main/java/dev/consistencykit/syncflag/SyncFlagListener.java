package dev.consistencykit.syncflag;

import dev.consistencykit.core.OperationId;

/**
 * Hooks called as masters change and copies follow. Every method has a no-op default; a listener's exception is
 * logged and ignored.
 */
public interface SyncFlagListener {

    /** Where a propagation came from. */
    enum Source {
        /** The update's own propagation. */
        UPDATE,
        /** The sweeper took over a stale flag. */
        SWEEP,
        /** A reader saw a flagged master and repaired it. */
        READ_REPAIR,
        /** {@link SyncFlag#resync} or {@link SyncFlag#verify(boolean)} with repair. */
        RESYNC
    }

    /** A master was updated; {@code flagged} when the update may have changed a copied field. */
    default void onMasterUpdated(OperationId id, Object masterId, long version, boolean flagged) {
    }

    /**
     * Copies of a master were brought to {@code version}: {@code copiesWritten} documents changed, and the flag was
     * cleared ({@code cleared}) or left for a newer update.
     */
    default void onPropagated(Object masterId, long version, long copiesWritten, boolean cleared, Source source) {
    }
}
