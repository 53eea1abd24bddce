package dev.consistencykit.syncflag;

import java.util.Objects;

import org.bson.conversions.Bson;

import dev.consistencykit.core.OperationId;

/**
 * One change to a master document: an update (operators only) applied to the master with id {@code masterId}, under
 * operation id {@code id}. Updates are idempotent per master for a caller-supplied id: the master remembers the ids of
 * its last {@link SyncFlagConfig#rememberedUpdates()} updates.
 *
 * <pre>{@code
 * sync.apply(MasterUpdate.of("ann", Updates.set("name", "Ann Smith")));
 * sync.apply(MasterUpdate.of("ann", Updates.set("name", "Ann Smith")).withId(OperationId.of(requestId)));
 * }</pre>
 *
 * @param id       the operation id
 * @param masterId the master document's {@code _id}
 * @param update   the update to apply to it
 */
public record MasterUpdate(OperationId id, Object masterId, Bson update) {

    /**
     * Checks the id for null; the master id and the update are validated when the update is submitted (an
     * {@link dev.consistencykit.core.InvalidInputException} naming the field, nothing written).
     */
    public MasterUpdate {
        Objects.requireNonNull(id, "id");
    }

    /** An update with a random id. */
    public static MasterUpdate of(Object masterId, Bson update) {
        return new MasterUpdate(OperationId.random(), masterId, update);
    }

    /** The same update with a caller-supplied id, for idempotent retries. */
    public MasterUpdate withId(OperationId operationId) {
        return new MasterUpdate(operationId, masterId, update);
    }
}
