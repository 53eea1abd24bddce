package dev.consistencykit.syncflag;

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
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.UnsafeConfigurationException;
import dev.consistencykit.testkit.DatabaseSnapshot;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.Sharding;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * On a sharded cluster, masters sharded on a key not led by {@code _id} are refused, typed, before any write: an
 * update is recorded on its master with {@code findOneAndUpdate} by {@code _id}, which such a collection refuses. The
 * copies' collections may be sharded on any key (each propagation then goes to every shard unless the key is the
 * copy's id field). Runs where the server can shard.
 */
@ExtendWith(MongoTestExtension.class)
class ShardedSetupTest {

    private MongoDatabase db;
    private Sharding sharding;

    @BeforeEach
    void freshUnplannedDatabase(MongoClient client) {
        this.sharding = Sharding.of(client);
        assumeTrue(sharding.unavailable().isEmpty(), sharding.unavailable().orElse(""));
        this.db = client.getDatabase(MongoTarget.freshDatabaseName("sharded-sync"));
        Blog.seed(db, 3, 2);
    }

    @AfterEach
    void drop() {
        if (db != null) {
            MongoTarget.drop(db);
        }
    }

    @Test
    void shouldRefuseMastersShardedOnAKeyNotLedByIdBeforeAnyWrite() {
        sharding.shard(db, Blog.USERS, new Document("email", "hashed"));
        DatabaseSnapshot before = DatabaseSnapshot.of(db);

        assertThatThrownBy(() -> Blog.sync(db).build().update("u0", Updates.set("name", "Ann")))
                .isInstanceOf(UnsafeConfigurationException.class).hasMessageContaining("'users'")
                .hasMessageContaining("{\"email\": \"hashed\"}").hasMessageContaining("findOneAndUpdate by _id");
        assertThat(DatabaseSnapshot.of(db)).as("nothing written").isEqualTo(before);
    }

    @Test
    void shouldKeepCopiesInStepWithMastersShardedOnIdAndCopiesOnTheirOwnKeys() {
        sharding.shard(db, Blog.USERS, new Document("_id", "hashed"));
        sharding.shard(db, Blog.COMMENTS, new Document("authorId", "hashed"));
        sharding.shard(db, Blog.POSTS, new Document("_id", "hashed"));
        SyncFlag sync = Blog.sync(db).build();
        sync.ensureIndexes();

        sync.update("u0", Updates.set("name", "Ann"));
        sync.update("u1", Updates.set("name", "Bob"));

        assertThat(sync.setupProblems()).isEmpty();
        assertThat(Blog.invariants(db)).isEmpty();
        assertThat(Blog.nameOf(db, "u0")).isEqualTo("Ann");
    }
}
