package dev.consistencykit.core;

import java.time.Duration;
import java.util.Objects;

import dev.consistencykit.core.spi.RecordReleases;

/**
 * An operation's record that its writer has not released ({@link RecordReleases}): kept from prune and archive so that
 * a late retry of the writer's record write finds it rather than inserts it again. A writer that lives releases its
 * records in batches, on every recovery, prune or archive it runs, and on {@code close()}; one that died leaves them
 * until an operator, knowing no process of that time can still be paused, releases them. Past its retention a kept
 * record is compacted: its content goes, the few fields a late retry needs stay.
 *
 * @param id        the operation's id
 * @param writer    the call that wrote it ({@code <instance>/<process>#<n>}), whose release it waits for
 * @param age       how long since it was written or last changed, by server time
 * @param compacted whether its content is gone already (only the evidence against a late retry is left)
 */
public record KeptRecord(Object id, String writer, Duration age, boolean compacted) {

    /** Validates the components. */
    public KeptRecord {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(writer, "writer");
        Objects.requireNonNull(age, "age");
    }
}
