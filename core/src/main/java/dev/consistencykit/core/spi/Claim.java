package dev.consistencykit.core.spi;

import java.time.Instant;
import java.util.Objects;

import org.bson.Document;

/**
 * A document claimed with {@link ConditionalUpdates#claim}: the caller owns it until {@code leaseExpiresAt}
 * (server time), and every write it makes must carry {@code fencingToken}, which is larger than that of every
 * earlier claim of the same document.
 *
 * @param id             the claimed document's id
 * @param owner          the owner name that was set
 * @param fencingToken   this claim's token
 * @param leaseExpiresAt when another process may take the document over
 * @param document       the document after the claim
 */
public record Claim(Object id, String owner, long fencingToken, Instant leaseExpiresAt, Document document) {

    /** Validates the components. */
    public Claim {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(leaseExpiresAt, "leaseExpiresAt");
        Objects.requireNonNull(document, "document");
    }
}
