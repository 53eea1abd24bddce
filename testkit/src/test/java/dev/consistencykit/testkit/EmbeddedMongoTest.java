package dev.consistencykit.testkit;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Updates;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import dev.consistencykit.testkit.contract.CheckResult;
import dev.consistencykit.testkit.contract.ContractCheck;
import dev.consistencykit.testkit.contract.ServerContract;

class EmbeddedMongoTest {

    private static ContractCheck readAtomicity() {
        return ServerContract.checks().stream().filter(c -> c.name().equals("single-document-read-atomicity"))
                .findFirst().orElseThrow();
    }

    /** The same check with a longer budget: it stops at the first torn read. */
    private static ContractCheck readAtomicityFor(Duration duration) {
        return new ContractCheck("single-document-read-atomicity", "long run",
                db -> dev.consistencykit.testkit.contract.ContractChecksAccess.readAtomicity(db, duration));
    }

    @Test
    void shouldNeverServeTornReadsWhenReadFixIsInstalled() {
        try (EmbeddedMongo server = EmbeddedMongo.start(); MongoClient client = MongoClients.create(
                server.connectionString())) {
            CheckResult result = ServerContract.run(client, readAtomicity());

            assertThat(result.passed()).as(result.toString()).isTrue();
        }
    }

    @Test
    void shouldServeTornReadsWhenStockBackendIsUsed() {
        // The check must be able to fail: the stock backend is the one EMBEDDED-SERVER.md measured tearing.
        MongoServer stock = new MongoServer(new MemoryBackend());
        String uri = stock.bindAndGetConnectionString();
        try (MongoClient client = MongoClients.create(uri)) {
            CheckResult result = ServerContract.run(client, readAtomicityFor(Duration.ofSeconds(20)));

            assertThat(result.passed()).as(result.toString()).isFalse();
            assertThat(result.detail()).contains("torn reads");
        } finally {
            stock.shutdownNow();
        }
    }

    @Test
    void shouldMatchWholeFilterWhenQueryNarrowedByIdIndex() {
        try (EmbeddedMongo server = EmbeddedMongo.start(); MongoClient client = MongoClients.create(
                server.connectionString())) {
            MongoCollection<Document> c = client.getDatabase("narrow").getCollection("tx");
            List<Document> docs = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                docs.add(new Document("_id", i).append("state", i % 2 == 0 ? "pending" : "done")
                        .append("markers", List.of("m" + i)));
            }
            c.insertMany(docs);
            c.insertOne(new Document("_id", new Document("k", 1)).append("state", "pending"));

            assertThat(c.updateOne(and(eq("_id", 4), eq("state", "pending")), Updates.set("state", "x"))
                    .getModifiedCount()).isEqualTo(1);
            assertThat(c.updateOne(and(eq("_id", 5), eq("state", "pending")), Updates.set("state", "x"))
                    .getModifiedCount()).isZero();
            assertThat(c.updateOne(and(eq("_id", 6), eq("markers", "m6")), Updates.set("state", "y"))
                    .getModifiedCount()).isEqualTo(1);
            assertThat(c.updateOne(and(eq("_id", 8), eq("markers", "m6")), Updates.set("state", "y"))
                    .getModifiedCount()).isZero();
            assertThat(c.find(and(eq("_id", new Document("k", 1)), eq("state", "pending"))).first()).isNotNull();
            assertThat(c.countDocuments(and(in("_id", List.of(1, 2, 3)), eq("state", "done")))).isEqualTo(2);
            assertThat(c.countDocuments(and(eq("_id", 999), eq("state", "done")))).isZero();
            assertThat(c.countDocuments(eq("state", "x"))).isEqualTo(1);
        }
    }

    private static ContractCheck check(String name) {
        return ServerContract.checks().stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void shouldCountOnlyInsertedDocumentsWhenBulkHasDuplicate() {
        try (EmbeddedMongo server = EmbeddedMongo.start(); MongoClient client = MongoClients.create(
                server.connectionString())) {
            assertThat(ServerContract.run(client, check("unordered-bulk-write")).passed()).isTrue();
        }
        MongoServer stock = new MongoServer(new MemoryBackend());
        try (MongoClient client = MongoClients.create(stock.bindAndGetConnectionString())) {
            CheckResult result = ServerContract.run(client, check("unordered-bulk-write"));

            assertThat(result.passed()).as("the stock backend over-reports inserts: " + result).isFalse();
            assertThat(result.detail()).contains("inserted 2");
        } finally {
            stock.shutdownNow();
        }
    }

    @Test
    void shouldListenOnLoopbackWhenStarted() {
        try (EmbeddedMongo server = EmbeddedMongo.start()) {
            assertThat(server.connectionString()).isEqualTo("mongodb://127.0.0.1:" + server.port());
            assertThat(server.port()).isPositive();
        }
    }
}
