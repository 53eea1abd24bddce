package dev.consistencykit.core.spi;

import java.util.Objects;
import java.util.Optional;

import org.bson.Document;

/**
 * The result of a guarded update: its {@link UpdateOutcome}, and the document when the helper read it (the
 * document after the change for helpers that use {@code findOneAndUpdate}, the current document whenever the
 * outcome had to be decided by re-reading).
 *
 * @param outcome  what happened
 * @param document the document as last read, when it was read
 */
public record GuardedResult(UpdateOutcome outcome, Optional<Document> document) {

    /** Validates the components. */
    public GuardedResult {
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(document, "document");
    }

    static GuardedResult of(UpdateOutcome outcome, Document document) {
        return new GuardedResult(outcome, Optional.ofNullable(document));
    }

    /** Whether the change is in place after the call. */
    public boolean isInPlace() {
        return outcome.isInPlace();
    }
}
