package dev.consistencykit.twophase.internal;

import org.bson.Document;

/** Thrown inside a drive when the fencing token moved on: another process owns the transaction now. */
final class LostOwnership extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final transient Document current;

    LostOwnership(Document current) {
        super(null, null, false, false);
        this.current = current;
    }
}
