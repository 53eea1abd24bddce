package dev.consistencykit.twophase.internal;

import static dev.consistencykit.twophase.internal.TransactionSchema.P_COLLECTION;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_ID;

import java.util.ArrayList;
import java.util.List;

import org.bson.Document;

import dev.consistencykit.core.OperationId;

/**
 * A validated transaction in its stored form: what every part of the protocol drives.
 *
 * @param id           the transaction's id
 * @param label        its label
 * @param participants its participant entries as stored (collection, id, precondition, prepare, commit, rollback)
 * @param spec         the fingerprint of what it changes
 */
public record EncodedTransaction(Object id, String label, List<Document> participants, String spec) {

    OperationId operationId() {
        return new OperationId(id);
    }

    /** Which documents take part, as stored for queries and inspection: {@code [{c, id}]}. */
    List<Document> index() {
        List<Document> index = new ArrayList<>();
        for (Document p : participants) {
            index.add(new Document(P_COLLECTION, p.get(P_COLLECTION)).append(P_ID, p.get(P_ID)));
        }
        return index;
    }
}
