package dev.consistencykit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** A collection sharded where the server can shard, and a reason where it cannot. */
@ExtendWith(MongoTestExtension.class)
class ShardingTest {

    @Test
    void shouldShardACollectionWhereTheServerCanAndReadItsShardKeyBack(MongoClient client, MongoDatabase db) {
        Sharding sharding = Sharding.of(client);
        assumeTrue(sharding.unavailable().isEmpty(), sharding.unavailable().orElse(""));
        sharding.shard(db, "orders", new Document("_id", "hashed"));

        assertThat(sharding.shardKey(db, "orders")).contains(new Document("_id", "hashed"));
        assertThat(sharding.shardKey(db, "customers")).as("a collection never sharded").isEmpty();
    }

    @Test
    void shouldSayWhyWhereTheServerCannotShardAndRefuseToTry(MongoTarget target, MongoDatabase db) {
        Sharding sharding = Sharding.of(target.client());
        assumeTrue(sharding.unavailable().isPresent(), "this server can shard");

        assertThat(sharding.unavailable().get()).contains("no shard command is set")
                .contains(Sharding.COMMAND_ENVIRONMENT);
        assertThatThrownBy(() -> sharding.shard(db, "orders", new Document("_id", "hashed")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining(db.getName() + ".orders");
        assertThat(sharding.applyPlan(db)).isSameAs(db);
        assertThat(sharding.shardKey(db, "orders")).isEmpty();
    }

    /**
     * The contract's sharding check runs wherever a collection can be sharded (its verdict is the server's: the
     * distributed DocumentDB fails it), and is reported as not run, never as passed, where none can.
     */
    @Test
    void shouldRunTheUniqueIndexAcrossShardsCheckExactlyWhereTheServerCanShard(MongoClient client) {
        dev.consistencykit.testkit.contract.CheckResult result = dev.consistencykit.testkit.contract.ServerContract
                .run(client, dev.consistencykit.testkit.contract.ServerContract.checks().stream()
                        .filter(c -> c.name().equals("unique-index-across-shards")).findFirst().orElseThrow());

        assertThat(result.skipped()).isEqualTo(Sharding.of(client).unavailable().isPresent());
        assertThat(result.verdict()).isEqualTo(result.skipped() ? "SKIP" : result.passed() ? "PASS" : "FAIL");
    }
}
