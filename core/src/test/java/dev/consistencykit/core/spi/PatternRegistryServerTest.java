package dev.consistencykit.core.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ServerDatabases;

/** The registry the patterns write from {@code ensureIndexes()}: idempotent, and read back as input. */
@ExtendWith(ServerDatabases.class)
class PatternRegistryServerTest {

    @Test
    void shouldRecordEachInstanceOnceAndReadItBack(MongoDatabase db) {
        PatternRegistry.Registration payments = new PatternRegistry.Registration("two-phase", "payments",
                Map.of("transactions", "payTx", "accounts", "wallets"), Map.of("balance", "cents"));

        PatternRegistry.register(db, payments);
        PatternRegistry.register(db, payments);

        assertThat(PatternRegistry.registered(db)).containsExactly(payments);
        assertThat(db.getCollection(PatternRegistry.COLLECTION).countDocuments()).isEqualTo(1);
    }

    @Test
    void shouldSkipEntriesNoPatternWrote(MongoDatabase db) {
        PatternRegistry.Registration queue = new PatternRegistry.Registration("job-queue", "jobs", Map.of("jobs",
                "jobs"), Map.of());
        PatternRegistry.register(db, queue);
        db.getCollection(PatternRegistry.COLLECTION).insertMany(List.of(
                new Document("_id", "a").append("pattern", "two-phase").append("name", "x")
                        .append("collections", new Document("transactions", "$where")),
                new Document("_id", "b").append("pattern", "two-phase").append("name", "y")
                        .append("collections", new Document("transactions", "a.b")),
                new Document("_id", "c").append("pattern", "two-phase").append("name", "z")
                        .append("collections", new Document("transactions", 42)),
                new Document("_id", "d").append("pattern", 7).append("name", "w"),
                new Document("_id", "e").append("pattern", "versioning").append("name", " ")
                        .append("collections", new Document()),
                new Document("_id", "f").append("pattern", "ledger").append("name", "v")
                        .append("collections", new Document("ledger", "ok"))
                        .append("fields", new Document("balance", "$inc"))));

        assertThat(PatternRegistry.registered(db)).containsExactly(queue);
    }
}
