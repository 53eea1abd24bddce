package dev.consistencykit.spring;

import java.util.Objects;

import com.mongodb.client.MongoDatabase;

/**
 * The database every auto-configured instance works in. A bean of its own type, so that it never competes with an
 * application's own {@code MongoDatabase} bean; define one to choose another database or its codec registry.
 *
 * @param database the database, with the application's codec registry
 */
public record ConsistencyKitDatabase(MongoDatabase database) {

    /** Checks the database is given. */
    public ConsistencyKitDatabase {
        Objects.requireNonNull(database, "database");
    }
}
