package dev.consistencykit.versioning;

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
 * On a sharded cluster, item versions or version records sharded on a key that may put two documents with one
 * {@code _id} on two shards are refused, typed, before any write: each is one by its {@code _id} (which holds its
 * root), and the server keeps {@code _id} unique across shards only where the shard key sends one {@code _id} to
 * one shard — a key led by {@code _id} or by {@code root}. Those placements run whole trees. Runs where the server
 * can shard.
 */
@ExtendWith(MongoTestExtension.class)
class ShardedSetupTest {

    private MongoDatabase db;
    private Sharding sharding;

    @BeforeEach
    void freshUnplannedDatabase(MongoClient client) {
        this.sharding = Sharding.of(client);
        assumeTrue(sharding.unavailable().isEmpty(), sharding.unavailable().orElse(""));
        this.db = client.getDatabase(MongoTarget.freshDatabaseName("sharded-versions"));
        Catalogue.seed(db, Catalogue.products(3));
    }

    @AfterEach
    void drop() {
        if (db != null) {
            MongoTarget.drop(db);
        }
    }

    @Test
    void shouldRefuseItemVersionsShardedOnAKeyThatSplitsAnIdBeforeAnyWrite() {
        sharding.shard(db, VersionedStoreConfig.DEFAULT_ITEMS_COLLECTION, new Document("item", "hashed"));
        DatabaseSnapshot before = DatabaseSnapshot.of(db);

        assertThatThrownBy(() -> Catalogue.store(db).build().commit(ChangeSet.on(Catalogue.ROOT, 1)
                .put("i0", Catalogue.product("A", 1)).build())).isInstanceOf(UnsafeConfigurationException.class)
                .hasMessageContaining("'versionItems'").hasMessageContaining("{\"item\": \"hashed\"}")
                .hasMessageContaining("_id or root");
        assertThat(DatabaseSnapshot.of(db)).as("nothing written").isEqualTo(before);
    }

    @Test
    void shouldCommitAndReadWholeTreesWithTheRecommendedPlacement() {
        sharding.shard(db, VersionedStoreConfig.DEFAULT_ROOTS_COLLECTION, new Document("_id", "hashed"));
        sharding.shard(db, VersionedStoreConfig.DEFAULT_ITEMS_COLLECTION, new Document("root", "hashed"));
        sharding.shard(db, VersionedStoreConfig.DEFAULT_HISTORY_COLLECTION, new Document("root", "hashed"));
        VersionedStore store = Catalogue.store(db).build();
        store.ensureIndexes();

        store.commit(ChangeSet.on(Catalogue.ROOT, 1).put("i0", Catalogue.product("A", 1)).delete("i2").build());
        store.commit(ChangeSet.on(Catalogue.ROOT, 2).put("i1", Catalogue.product("B", 2)).build());

        assertThat(store.setupProblems()).isEmpty();
        assertThat(store.read(Catalogue.ROOT).items()).containsOnlyKeys("i0", "i1");
        assertThat(store.readAsOf(Catalogue.ROOT, 1).items()).as("as seeded").containsOnlyKeys("i0", "i1", "i2");
    }
}
