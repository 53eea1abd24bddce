package dev.consistencykit.twophase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.UnsafeConfigurationException;
import dev.consistencykit.testkit.DatabaseSnapshot;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.Sharding;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * On a sharded cluster, records sharded on a key not led by {@code _id} are refused, typed, before any write: a
 * transaction is recorded once by its id, which a shard key led by another field keeps unique only per shard-key
 * value (a second record with the same id is stored on the distributed DocumentDB), and recovery takes a stale one
 * over with {@code findOneAndUpdate} by {@code _id}. On {@code _id}, transfers run; a worker's {@code processNext()},
 * which claims the oldest waiting record by state, is refused there before its first claim. Runs where the server can
 * shard.
 */
@ExtendWith(MongoTestExtension.class)
class ShardedSetupTest {

    private MongoDatabase db;
    private Sharding sharding;

    @BeforeEach
    void freshUnplannedDatabase(MongoClient client) {
        this.sharding = Sharding.of(client);
        assumeTrue(sharding.unavailable().isEmpty(), sharding.unavailable().orElse(""));
        this.db = client.getDatabase(MongoTarget.freshDatabaseName("sharded-2pc"));
        Bank.seed(db, Bank.accounts(2, 100));
    }

    @AfterEach
    void drop() {
        if (db != null) {
            MongoTarget.drop(db);
        }
    }

    private TwoPhaseCommit strategy() {
        return TwoPhaseCommit.builder(db).retryPolicy(TestPolicies.FAST_RETRY).build();
    }

    @Test
    void shouldRefuseRecordsShardedOnAKeyNotLedByIdBeforeAnyWrite() {
        sharding.shard(db, Bank.TRANSACTIONS, new Document("state", "hashed"));
        DatabaseSnapshot before = DatabaseSnapshot.of(db);

        assertThatThrownBy(() -> strategy().transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 5)))
                .isInstanceOf(UnsafeConfigurationException.class).hasMessageContaining("'transactions'")
                .hasMessageContaining("{\"state\": \"hashed\"}").hasMessageContaining("led by _id");
        assertThat(DatabaseSnapshot.of(db)).as("nothing written").isEqualTo(before);
        assertThat(strategy().setupProblems()).singleElement().asString().contains("'transactions'");
    }

    @Test
    void shouldTransferOnRecordsShardedOnIdAndRefuseAWorkersClaimThere() {
        sharding.shard(db, Bank.TRANSACTIONS, new Document("_id", "hashed"));
        sharding.shard(db, Bank.ACCOUNTS, new Document("_id", "hashed"));
        TwoPhaseCommit tpc = strategy();
        tpc.ensureIndexes();

        OperationResult result = tpc.transfer(Transfer.of(OperationId.of("t1"), "a0", "a1", 5));
        tpc.submit(tpc.transferTransaction(Transfer.of(OperationId.of("t2"), "a0", "a1", 7)));

        assertThat(result.isCommitted()).isTrue();
        assertThatThrownBy(tpc::processNext).isInstanceOf(UnsafeConfigurationException.class)
                .hasMessageContaining("processNext()").hasMessageContaining("keep 'transactions' unsharded");
        assertThat(Bank.balance(db, "a0")).isEqualTo(95L);
    }
}
