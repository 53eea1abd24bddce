package dev.consistencykit.core.spi;

import org.bson.conversions.Bson;

import dev.consistencykit.core.InvalidInputException;

/**
 * One document's part of a batched {@link OnceEffects#reserve}, {@link OnceEffects#apply} or {@link OnceEffects#settle}.
 *
 * @param id         the document's id
 * @param guard      an extra filter, or {@code null}
 * @param update     the effect, or {@code null} to move the marker only
 * @param lastUpdate the effect to send instead of {@code update} when this operation is the last one in flight on the
 *                   document (its marker array goes with it), or {@code null} for {@code update}: how a caller that
 *                   keeps an array of its own beside the marker (an outbox) removes that array rather than leave it
 *                   empty
 */
public record MarkerWrite(Object id, Bson guard, Bson update, Bson lastUpdate) {

    /**
     * @throws InvalidInputException if {@code id} is not a valid document id
     */
    public MarkerWrite {
        Ids.documentId(null, "id", id);
    }

    /** A write whose effect is the same whether or not other operations are in flight on the document. */
    public MarkerWrite(Object id, Bson guard, Bson update) {
        this(id, guard, update, null);
    }

    /** The effect when this operation is the last one in flight on the document. */
    public Bson updateWhenLast() {
        return lastUpdate != null ? lastUpdate : update;
    }

    /** A write on {@code id} without guard. */
    public static MarkerWrite of(Object id, Bson update) {
        return new MarkerWrite(id, null, update);
    }
}
