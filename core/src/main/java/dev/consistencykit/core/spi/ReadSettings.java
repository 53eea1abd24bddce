package dev.consistencykit.core.spi;

import com.mongodb.ReadConcern;
import com.mongodb.ReadConcernLevel;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoDatabase;

/**
 * The reads a pattern makes of its own writes. A pattern reads back what it has just written to decide its next step
 * (was my write applied, who owns this now), so those reads must see every acknowledged write: from the primary, at
 * a read concern that includes writes acknowledged with {@code w:1}. A database configured by the application for its
 * own reads ({@code secondaryPreferred}, {@code majority}) would otherwise break a guarantee silently.
 *
 * <p>Stateless and thread-safe.
 */
public final class ReadSettings {

    private ReadSettings() {
    }

    /**
     * {@code database} with the primary read preference, and read concern {@code local} when the configured one could
     * miss an acknowledged write ({@code majority}, {@code snapshot}, {@code available}); {@code linearizable} and the
     * server's default are kept.
     */
    public static MongoDatabase ownReads(MongoDatabase database) {
        MongoDatabase primary = database.withReadPreference(ReadPreference.primary());
        ReadConcernLevel level = primary.getReadConcern().getLevel();
        if (level == ReadConcernLevel.MAJORITY || level == ReadConcernLevel.SNAPSHOT
                || level == ReadConcernLevel.AVAILABLE) {
            return primary.withReadConcern(ReadConcern.LOCAL);
        }
        return primary;
    }
}
