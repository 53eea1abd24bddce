package dev.consistencykit.testkit;

import static com.mongodb.client.model.Filters.and;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;

import dev.consistencykit.embedded.EmbeddedMongo;
import dev.consistencykit.testkit.contract.CheckResult;
import dev.consistencykit.testkit.contract.ContractCheck;
import dev.consistencykit.testkit.contract.ServerContract;

/**
 * The server contract's checks against the embedded server: read atomicity holds with the testkit's fix and fails
 * without it, so the check can fail; an unordered bulk write counts only what it inserted.
 */
class EmbeddedServerContractTest {

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
        // The check must be able to fail: the stock backend is the one docs/embedded-server.md measured tearing.
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
}
