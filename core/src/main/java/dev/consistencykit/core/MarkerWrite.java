package dev.consistencykit.core;

import org.bson.conversions.Bson;

/**
 * One document's part of a batched {@link ConditionalUpdates#applyOnceAll} or {@link ConditionalUpdates#settleOnceAll}.
 *
 * @param id     the document's id
 * @param guard  an extra filter, or {@code null}
 * @param update the effect, or {@code null} to move the marker only
 */
public record MarkerWrite(Object id, Bson guard, Bson update) {

    /**
     * @throws InvalidInputException if {@code id} is not a valid document id
     */
    public MarkerWrite {
        Inputs.documentId(null, "id", id);
    }

    /** A write on {@code id} without guard. */
    public static MarkerWrite of(Object id, Bson update) {
        return new MarkerWrite(id, null, update);
    }
}
