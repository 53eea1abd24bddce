package dev.consistencykit.logreconciliation;

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

import dev.consistencykit.core.UnsafeConfigurationException;
import dev.consistencykit.testkit.DatabaseSnapshot;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.Sharding;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * On a sharded cluster, a ledger whose collections are sharded the way its safety cannot live with is refused, typed,
 * before any write: the log on any key (its unique index lies inside the changes array, which no shard key can be,
 * and the distributed DocumentDB keeps a unique index not led by the shard key unique only per shard-key value), the
 * accounts' caches on a key not led by {@code _id} (numbers are reserved with {@code findOneAndUpdate} by {@code _id}).
 * The recommended placement (docs/operations.md) is accepted. Runs where the server can shard ({@link Sharding}).
 */
@ExtendWith(MongoTestExtension.class)
class ShardedSetupTest {

    private MongoDatabase db;
    private Sharding sharding;

    @BeforeEach
    void freshUnplannedDatabase(MongoClient client) {
        this.sharding = Sharding.of(client);
        assumeTrue(sharding.unavailable().isEmpty(), sharding.unavailable().orElse(""));
        this.db = client.getDatabase(MongoTarget.freshDatabaseName("sharded-ledger"));
        Books.seed(db, Books.accounts(2, 100));
    }

    @AfterEach
    void drop() {
        if (db != null) {
            MongoTarget.drop(db);
        }
    }

    @Test
    void shouldRefuseALogShardedOnAnyKeyBeforeAnyWrite() {
        sharding.shard(db, LedgerConfig.DEFAULT_LEDGER_COLLECTION, new Document("_id", "hashed"));
        Ledger ledger = Books.ledger(db).build();
        DatabaseSnapshot before = DatabaseSnapshot.of(db);

        assertThatThrownBy(ledger::ensureIndexes).isInstanceOf(UnsafeConfigurationException.class)
                .hasMessageContaining("'account_seq_unique'").hasMessageContaining("'ledger'")
                .hasMessageContaining("{\"_id\": \"hashed\"}").hasMessageContaining("keep 'ledger' unsharded");
        assertThatThrownBy(() -> Books.ledger(db).build().append(LedgerTransaction.transfer("a0", "a1", 5)))
                .isInstanceOf(UnsafeConfigurationException.class).hasMessageContaining("'ledger'");
        assertThat(ledger.setupProblems()).anySatisfy(p -> assertThat(p).contains("not kept unique across shards"));
        assertThat(DatabaseSnapshot.of(db).documentCount()).as("nothing written").isEqualTo(before.documentCount());
    }

    @Test
    void shouldRefuseAccountCachesShardedOnAKeyNotLedByIdBeforeAnyWrite() {
        sharding.shard(db, LedgerConfig.DEFAULT_ACCOUNTS_COLLECTION, new Document("balance", "hashed"));
        DatabaseSnapshot before = DatabaseSnapshot.of(db);

        assertThatThrownBy(Books.ledger(db).build()::ensureIndexes).isInstanceOf(UnsafeConfigurationException.class)
                .hasMessageContaining("'ledgerAccounts'").hasMessageContaining("{\"balance\": \"hashed\"}")
                .hasMessageContaining("findOneAndUpdate by _id");
        assertThatThrownBy(() -> Books.ledger(db).seqAllocation(SeqAllocation.COUNTER).build()
                .append(LedgerTransaction.transfer("a0", "a1", 5))).isInstanceOf(UnsafeConfigurationException.class)
                .hasMessageContaining("'ledgerAccounts'");
        assertThat(DatabaseSnapshot.of(db).documentCount()).as("nothing written").isEqualTo(before.documentCount());
    }

    @Test
    void shouldAcceptTheRecommendedPlacementAndKeepTheBooks() {
        sharding.shard(db, LedgerConfig.DEFAULT_ACCOUNTS_COLLECTION, new Document("_id", "hashed"));
        sharding.shard(db, LedgerConfig.DEFAULT_ARCHIVE_COLLECTION, new Document("_id", "hashed"));
        Ledger ledger = Books.ledger(db).seqAllocation(SeqAllocation.COUNTER).build();
        ledger.ensureIndexes();

        ledger.apply(LedgerTransaction.transfer("a0", "a1", 5));
        ledger.archive(java.time.Duration.ZERO);

        assertThat(ledger.setupProblems()).isEmpty();
        assertThat(Books.invariants(db, Books.accounts(2, 100), true, null)).isEmpty();
    }
}
