package dev.consistencykit.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;

import dev.consistencykit.embedded.EmbeddedMongo;
import dev.consistencykit.testkit.Sharding;

class PeerBenchTest {

    @Test
    void shouldTakeShardAsAFlagBesideTheOptionsThatHaveValues() {
        PeerBench.Options sharded = PeerBench.Options.parse("--seconds", "3", "--shard", "--sizes", "1000");
        PeerBench.Options unsharded = PeerBench.Options.parse("--seconds", "3");

        assertThat(sharded.shard()).isTrue();
        assertThat(sharded.seconds()).isEqualTo(3);
        assertThat(sharded.sizes()).containsExactly(1000);
        assertThat(unsharded.shard()).isFalse();
        assertThatThrownBy(() -> PeerBench.Options.parse("--shards", "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown option --shards");
    }

    /**
     * A shard key naming a collection the side never makes, or a field its documents lack, would shard nothing the
     * workload touches, and the table would not say so.
     */
    @Test
    void shouldShardOnlyCollectionsEachSideMakesOnAFieldEachOfTheirDocumentsHolds() {
        try (EmbeddedMongo server = EmbeddedMongo.start();
             MongoClient client = MongoClients.create(server.connectionString())) {
            // MongoDB's transactions need sessions, which the embedded server has not: that side seeds its accounts as
            // ours does (Transfers.seed), and shards that collection alone
            assertThat(new Transfers.Native(client).shardKeys()).containsOnlyKeys(Transfers.ACCOUNTS);
            List<Side> sides = List.of(new Transfers.Ours(client), new Versions.Ours(client),
                    new Versions.JaVers(client));
            List<String> keyed = new ArrayList<>();
            for (Side side : sides) {
                try (side) {
                    side.prepare(3);
                    side.run(1, Duration.ofMillis(200));   // the records of transfers come with the first
                    MongoDatabase db = client.getDatabase(side.database());
                    side.shardKeys().forEach((collection, field) -> {
                        keyed.add(side.name() + ": " + collection);
                        assertThat(db.listCollectionNames()).as("%s's collections", side.name()).contains(collection);
                        assertThat(db.getCollection(collection).countDocuments(Filters.exists(field, false)))
                                .as("%s: documents of %s without %s", side.name(), collection, field).isZero();
                    });
                }
            }
            assertThat(keyed).hasSize(6);
        }
    }

    @Test
    void shouldRefuseToShardWhereTheServerCannot() {
        assumeThat(Sharding.configuredCommand()).isEmpty();
        try (EmbeddedMongo server = EmbeddedMongo.start()) {
            PeerBench.Options options = PeerBench.Options.parse("--uri", server.connectionString(), "--shard",
                    "--out", "target/peer-bench-test");

            assertThatThrownBy(() -> PeerBench.run(options)).isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("--shard: ");
        }
    }
}
