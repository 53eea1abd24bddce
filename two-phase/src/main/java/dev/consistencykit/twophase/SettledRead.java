package dev.consistencykit.twophase;

import java.util.List;
import java.util.Objects;

import org.bson.Document;

/**
 * The answer of {@link TwoPhaseCommit#readSettled}: either the documents, none of them carrying an unsettled
 * transaction and all read as of one moment, or an explicit "in flight" with the transactions still pending.
 *
 * @param documents            the documents, in the order asked, when settled; empty otherwise
 * @param pendingTransactions  the ids of the transactions still in flight on them, when not settled
 */
public record SettledRead(List<Document> documents, List<Object> pendingTransactions) {

    /** Copies the lists. */
    public SettledRead {
        documents = List.copyOf(Objects.requireNonNull(documents, "documents"));
        pendingTransactions = List.copyOf(Objects.requireNonNull(pendingTransactions, "pendingTransactions"));
    }

    /** Whether the documents are settled and returned. */
    public boolean isSettled() {
        return pendingTransactions.isEmpty();
    }
}
