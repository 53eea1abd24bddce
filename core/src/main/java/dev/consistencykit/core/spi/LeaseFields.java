package dev.consistencykit.core.spi;

import dev.consistencykit.core.InvalidInputException;

/**
 * The fields a claimed document carries: who owns it, when the lease expires (server time), and the fencing token,
 * incremented on every claim, that every write of the owner must carry.
 *
 * @param ownerField   the owner's name
 * @param expiresField the lease expiry, a date
 * @param tokenField   the fencing token, a long
 */
public record LeaseFields(String ownerField, String expiresField, String tokenField) {

    /** {@code owner}, {@code leaseExpiresAt}, {@code fencingToken}. */
    public static final LeaseFields DEFAULT = new LeaseFields("owner", "leaseExpiresAt", "fencingToken");

    /**
     * @throws InvalidInputException if a field name is not plain
     */
    public LeaseFields {
        Names.fieldPath(null, "ownerField", ownerField);
        Names.fieldPath(null, "expiresField", expiresField);
        Names.fieldPath(null, "tokenField", tokenField);
    }
}
