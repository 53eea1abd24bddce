package dev.consistencykit.core.spi;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import org.bson.types.ObjectId;

/**
 * Owner names for leases and claims: unique across processes (a random part per supplier) and within one (a counter),
 * readable in a document ({@code payments/3f2a9c1b#17}).
 */
public final class OwnerIds {

    private OwnerIds() {
    }

    /** A supplier of {@code <name>/<random>#<n>}, n counting from 1. */
    public static Supplier<String> sequence(String name) {
        Objects.requireNonNull(name, "name");
        String prefix = name + "/" + new ObjectId().toHexString().substring(16);
        AtomicLong counter = new AtomicLong();
        return () -> prefix + "#" + counter.incrementAndGet();
    }
}
