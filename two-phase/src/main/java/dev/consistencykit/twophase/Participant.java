package dev.consistencykit.twophase;

import java.util.Objects;
import java.util.Optional;

import org.bson.conversions.Bson;

import com.mongodb.client.model.Filters;

/**
 * One document a two-phase transaction changes, and how.
 *
 * <ul>
 *   <li>{@code precondition}: a filter the document must match at prepare time (for example
 *       {@code balance >= 100}); when it does not, the transaction is canceled with no net effect;</li>
 *   <li>{@code prepare}: applied at prepare, in the same atomic write that marks the document with the transaction
 *       id;</li>
 *   <li>{@code commit}: applied when the transaction commits, in the write that settles the mark;</li>
 *   <li>{@code rollback}: applied instead when it is canceled after this document was prepared; it must undo
 *       {@code prepare}.</li>
 * </ul>
 *
 * <p>Updates use update operators only ({@code $set}, {@code $unset}, {@code $inc}, {@code $mul}, {@code $min},
 * {@code $max}, {@code $push}, {@code $pull}, {@code $addToSet}, {@code $currentDate}); preconditions use
 * field conditions only ({@code $eq}, {@code $ne}, {@code $gt}, {@code $gte}, {@code $lt}, {@code $lte}, {@code $in},
 * {@code $nin}, {@code $exists}), combined with AND. Both are checked before anything is written.
 *
 * <pre>{@code
 * Participant debit = Participant.on("accounts", "alice")
 *         .when(Filters.gte("balance", 100L))
 *         .prepare(Updates.inc("balance", -100L))
 *         .rollback(Updates.inc("balance", 100L));
 * }</pre>
 *
 * @param collection   the collection of the document
 * @param documentId   the document's {@code _id}
 * @param precondition the filter checked at prepare, if any
 * @param prepare      the update applied at prepare, if any
 * @param commit       the update applied at commit, if any
 * @param rollback     the update applied at rollback, if any
 */
public record Participant(String collection, Object documentId, Optional<Bson> precondition, Optional<Bson> prepare,
                          Optional<Bson> commit, Optional<Bson> rollback) {

    /** Checks for nulls; everything else is checked when the transaction is submitted. */
    public Participant {
        Objects.requireNonNull(collection, "collection");
        Objects.requireNonNull(precondition, "precondition");
        Objects.requireNonNull(prepare, "prepare");
        Objects.requireNonNull(commit, "commit");
        Objects.requireNonNull(rollback, "rollback");
    }

    /** A participant that only marks document {@code documentId} of {@code collection}. */
    public static Participant on(String collection, Object documentId) {
        return new Participant(collection, documentId, Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.empty());
    }

    /** This participant with a precondition ANDed to any it has. */
    public Participant when(Bson condition) {
        Bson combined = precondition.map(p -> Filters.and(p, condition)).orElse(condition);
        return new Participant(collection, documentId, Optional.of(combined), prepare, commit, rollback);
    }

    /** This participant with its prepare update. */
    public Participant prepare(Bson update) {
        return new Participant(collection, documentId, precondition, Optional.of(update), commit, rollback);
    }

    /** This participant with its commit update. */
    public Participant commit(Bson update) {
        return new Participant(collection, documentId, precondition, prepare, Optional.of(update), rollback);
    }

    /** This participant with its rollback update. */
    public Participant rollback(Bson update) {
        return new Participant(collection, documentId, precondition, prepare, commit, Optional.of(update));
    }

    @Override
    public String toString() {
        return collection + "/" + documentId;
    }
}
