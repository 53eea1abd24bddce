package dev.consistencykit.core;

import java.util.List;
import java.util.Objects;

import org.bson.Document;

/**
 * One operation as an operator opens it: its record as the pattern stores it, and each document the operation
 * touches as a reader of the pattern sees it now (a two-phase participant as {@code readConsistent} shows it, a
 * ledger account with the balance a reader gets, a versioned root at its current version…). Read-only.
 *
 * @param id        the operation's id
 * @param state     the pattern's own name for its state now
 * @param record    the record as stored (a transaction, a job, a master's flag, a ledger transaction, a change set)
 * @param documents what the operation touches, in the order the record names them
 */
public record OperationView(Object id, String state, Document record, List<Touched> documents) {

    /** Validates and copies the components. */
    public OperationView {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(record, "record");
        documents = List.copyOf(documents);
    }

    /**
     * One document an operation touches.
     *
     * @param collection   its collection
     * @param id           its {@code _id}
     * @param asReaderSees the document as a reader of the pattern sees it now; {@code null} when there is none
     * @param note         how the reader's view was made, for an operator (may be empty)
     */
    public record Touched(String collection, Object id, Document asReaderSees, String note) {

        /** Validates the components. */
        public Touched {
            Objects.requireNonNull(collection, "collection");
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(note, "note");
        }
    }
}
