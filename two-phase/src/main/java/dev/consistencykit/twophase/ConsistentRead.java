package dev.consistencykit.twophase;

import java.util.List;
import java.util.Objects;

import org.bson.Document;

/**
 * The answer of {@link TwoPhaseCommit#readConsistent}: the documents with every transaction in flight on them
 * counted entirely or not at all, and which was which.
 *
 * <p>A committed transaction that was still settling is shown as settled (its commit update applied to the copies
 * still carrying it); one not yet decided, or being canceled, is shown as if it had never run (its rollback update
 * applied to the copies it was already applied to). Either way the transaction's bookkeeping entries are removed
 * from the copies, so they read as they will once it is settled. Nothing is written.
 *
 * @param documents  the documents, in the order asked (missing ones left out); empty when {@code unresolved} is not
 * @param counted    ids of the transactions in flight that are counted entirely (committed, not yet settled here)
 * @param notCounted ids of the transactions in flight that are counted not at all (undecided or canceled)
 * @param unresolved ids of transactions the read could not place (their update cannot be replayed in memory, such as
 *                   {@code $currentDate}, or the documents kept changing under the read): no documents then
 */
public record ConsistentRead(List<Document> documents, List<Object> counted, List<Object> notCounted,
                             List<Object> unresolved) {

    /** Copies the lists. */
    public ConsistentRead {
        documents = List.copyOf(Objects.requireNonNull(documents, "documents"));
        counted = List.copyOf(Objects.requireNonNull(counted, "counted"));
        notCounted = List.copyOf(Objects.requireNonNull(notCounted, "notCounted"));
        unresolved = List.copyOf(Objects.requireNonNull(unresolved, "unresolved"));
    }

    /** Whether the documents are returned: every transaction in flight on them was placed. */
    public boolean isResolved() {
        return unresolved.isEmpty();
    }
}
