package dev.consistencykit.core.spi;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

import org.bson.conversions.Bson;

import dev.consistencykit.core.InvalidInputException;

/**
 * A compare-and-set on a document's state field: from one of {@code from} to {@code to}, optionally guarded by an
 * extra filter and carrying an extra update, stamping {@code lastModified} with the server's time.
 *
 * <pre>{@code
 * Transition commit = Transition.of("state", "pending", "applied").guardedBy(Filters.eq("owner", me));
 * GuardedResult r = ConditionalUpdates.transition(transactions, txId, commit);
 * }</pre>
 *
 * @param stateField        the state field
 * @param from              the states the transition may start from
 * @param to                the state it ends in
 * @param guard             an extra filter, if any
 * @param update            an extra update applied in the same write, if any
 * @param lastModifiedField the field stamped with {@code $currentDate}
 * @param projection        the fields of the document to return, if not all
 * @param returnsDocument   whether an applied transition returns the document (one {@code findOneAndUpdate}) or
 *                          not (one {@code updateOne}, cheaper for both sides)
 */
public record Transition(String stateField, List<String> from, String to, Optional<Bson> guard,
                         Optional<Bson> update, String lastModifiedField, Optional<Bson> projection,
                         boolean returnsDocument) {

    /** The default field stamped with the server's time: {@value}. */
    public static final String DEFAULT_LAST_MODIFIED_FIELD = "lastModified";

    /**
     * @throws InvalidInputException if a field name is not plain
     * @throws IllegalArgumentException if {@code from} is empty or contains {@code to}
     */
    public Transition {
        Names.fieldName(null, "stateField", stateField);
        from = List.copyOf(from);
        Objects.requireNonNull(to, "to");
        if (from.isEmpty()) {
            throw new IllegalArgumentException("a transition needs at least one source state");
        }
        if (from.contains(to)) {
            throw new IllegalArgumentException("a transition to " + to + " cannot start from " + to);
        }
        Objects.requireNonNull(guard, "guard");
        Objects.requireNonNull(update, "update");
        Names.fieldName(null, "lastModifiedField", lastModifiedField);
        Objects.requireNonNull(projection, "projection");
    }

    /** A transition from {@code from} to {@code to} on {@code stateField}. */
    public static Transition of(String stateField, String from, String to) {
        return new Transition(stateField, List.of(from), to, Optional.empty(), Optional.empty(),
                DEFAULT_LAST_MODIFIED_FIELD, Optional.empty(), true);
    }

    /** A transition from any of {@code from} to {@code to} on {@code stateField}. */
    public static Transition of(String stateField, List<String> from, String to) {
        return new Transition(stateField, from, to, Optional.empty(), Optional.empty(), DEFAULT_LAST_MODIFIED_FIELD,
                Optional.empty(), true);
    }

    /** This transition, allowed only where {@code extraGuard} also matches. */
    public Transition guardedBy(Bson extraGuard) {
        return new Transition(stateField, from, to, Optional.of(extraGuard), update, lastModifiedField, projection,
                returnsDocument);
    }

    /** This transition, also applying {@code extraUpdate} in the same write. */
    public Transition alsoUpdating(Bson extraUpdate) {
        return new Transition(stateField, from, to, guard, Optional.of(extraUpdate), lastModifiedField, projection,
                returnsDocument);
    }

    /** This transition stamping another field with the server's time. */
    public Transition stamping(String field) {
        return new Transition(stateField, from, to, guard, update, field, projection, returnsDocument);
    }

    /**
     * This transition returning only the projected fields of the document (the state field is always included):
     * less for the server to send when the caller needs only a few fields.
     */
    public Transition returning(Bson fields) {
        return new Transition(stateField, from, to, guard, update, lastModifiedField, Optional.of(fields), true);
    }

    /**
     * This transition answering {@code APPLIED} without the document: one {@code updateOne}, which costs both the
     * client and the server less than a {@code findOneAndUpdate}. The document is still read when the transition
     * did not apply, to tell the other outcomes apart.
     */
    public Transition returningNothing() {
        return new Transition(stateField, from, to, guard, update, lastModifiedField, Optional.empty(), false);
    }
}
