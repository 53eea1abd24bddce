package dev.consistencykit.core.spi;

import java.util.Collection;
import java.util.List;
import java.util.Objects;

import org.bson.Document;

import dev.consistencykit.core.InvalidInputException;

/**
 * Where a document records the operations that are applying an effect to it, for {@link OnceEffects}: a
 * <em>reserved</em> array of {@code {o: operationId, n: nonce}} entries (an operation that will apply its effect, and
 * which attempt of it may) and an <em>applied</em> array of operation ids (effect applied, not yet settled).
 *
 * <p>Both arrays hold only operations in flight on the document: an entry is pushed when an operation starts on the
 * document and pulled when it settles there, so a document's overhead is bounded by the operations in flight on it,
 * never by how many operations it has seen. See {@link OnceEffects} for why a late writer still cannot apply twice
 * once that evidence is gone.
 *
 * @param reservedField the array of reservations, {@code {o, n}}
 * @param appliedField  the array of operation ids whose effect is applied and not yet settled
 */
public record EffectMarker(String reservedField, String appliedField) {

    /** The operation id inside a reservation entry. */
    public static final String OPERATION = "o";
    /** The attempt's nonce inside a reservation entry. */
    public static final String NONCE = "n";

    /**
     * @throws InvalidInputException    if a field name is not a plain field name
     * @throws IllegalArgumentException if two fields are the same
     */
    public EffectMarker {
        Names.fieldName(null, "reservedField", reservedField);
        Names.fieldName(null, "appliedField", appliedField);
        if (reservedField.equals(appliedField)) {
            throw new IllegalArgumentException("marker fields must differ: " + reservedField + ", " + appliedField);
        }
    }

    /** The marker with these two arrays. */
    public static EffectMarker of(String reservedField, String appliedField) {
        return new EffectMarker(reservedField, appliedField);
    }

    /** What a document carries for one operation. */
    public enum Evidence {
        /** Nothing: never started here, or settled (the two cannot be told apart, by design). */
        NONE,
        /** Reserved by the attempt asked about: it may apply. */
        RESERVED,
        /** Reserved by another attempt of the same operation. */
        RESERVED_BY_OTHER,
        /** The effect is applied and not yet settled. */
        APPLIED
    }

    /** What {@code document} carries for operation {@code operationId}, seen from the attempt {@code nonce}. */
    public Evidence evidence(Document document, Object operationId, String nonce) {
        if (contains(document.get(appliedField), operationId)) {
            return Evidence.APPLIED;
        }
        String holder = reservedBy(document, operationId);
        if (holder == null) {
            return Evidence.NONE;
        }
        return holder.equals(nonce) ? Evidence.RESERVED : Evidence.RESERVED_BY_OTHER;
    }

    /** The nonce of the attempt holding a reservation for {@code operationId} on {@code document}, or null. */
    public String reservedBy(Document document, Object operationId) {
        if (document.get(reservedField) instanceof Collection<?> entries) {
            for (Object e : entries) {
                if (e instanceof Document d && Objects.equals(d.get(OPERATION), operationId)) {
                    return d.get(NONCE) instanceof String s ? s : "";
                }
            }
        }
        return null;
    }

    /** The ids of every operation reserved or applied on {@code document}: the operations in flight on it. */
    public List<Object> inFlight(Document document) {
        java.util.ArrayList<Object> ids = new java.util.ArrayList<>();
        if (document.get(reservedField) instanceof Collection<?> entries) {
            for (Object e : entries) {
                if (e instanceof Document d && !ids.contains(d.get(OPERATION))) {
                    ids.add(d.get(OPERATION));
                }
            }
        }
        if (document.get(appliedField) instanceof Collection<?> applied) {
            for (Object id : applied) {
                if (!ids.contains(id)) {
                    ids.add(id);
                }
            }
        }
        return ids;
    }

    private static boolean contains(Object array, Object value) {
        return array instanceof Collection<?> c && c.contains(value);
    }
}
