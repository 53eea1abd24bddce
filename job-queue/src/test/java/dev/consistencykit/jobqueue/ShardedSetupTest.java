package dev.consistencykit.jobqueue;

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
 * On a sharded cluster, a queue whose jobs are sharded is refused, typed, before any write: a worker claims the next
 * job with {@code findOneAndUpdate} by state and due time, which a sharded collection refuses without its shard key
 * (code 61 on the distributed DocumentDB), and the dedupe index would be kept unique only per shard-key value. Its
 * key lines and schedules may be sharded on {@code _id}, not on another key. Runs where the server can shard.
 */
@ExtendWith(MongoTestExtension.class)
class ShardedSetupTest {

    private MongoDatabase db;
    private Sharding sharding;

    @BeforeEach
    void freshUnplannedDatabase(MongoClient client) {
        this.sharding = Sharding.of(client);
        assumeTrue(sharding.unavailable().isEmpty(), sharding.unavailable().orElse(""));
        this.db = client.getDatabase(MongoTarget.freshDatabaseName("sharded-jobs"));
    }

    @AfterEach
    void drop() {
        if (db != null) {
            MongoTarget.drop(db);
        }
    }

    @Test
    void shouldRefuseShardedJobsBeforeAnyEnqueueOrClaim() {
        sharding.shard(db, JobQueueConfig.DEFAULT_COLLECTION, new Document("_id", "hashed"));
        DatabaseSnapshot before = DatabaseSnapshot.of(db);

        assertThatThrownBy(() -> Friends.queue(db).build().ensureIndexes())
                .isInstanceOf(UnsafeConfigurationException.class).hasMessageContaining("'jobs'")
                .hasMessageContaining("{\"_id\": \"hashed\"}").hasMessageContaining("keep 'jobs' unsharded");
        assertThatThrownBy(() -> Friends.queue(db).build().enqueue(JobRequest.of("count", new Document("counter",
                "c0")))).isInstanceOf(UnsafeConfigurationException.class).hasMessageContaining("findOneAndUpdate");
        assertThatThrownBy(() -> Friends.queue(db).build().processNext())
                .isInstanceOf(UnsafeConfigurationException.class).hasMessageContaining("'jobs'");
        assertThat(DatabaseSnapshot.of(db).documentCount()).as("nothing written").isEqualTo(before.documentCount());
    }

    @Test
    void shouldRefuseKeyLinesShardedOnAKeyNotLedById() {
        sharding.shard(db, JobQueueConfig.DEFAULT_KEYS_COLLECTION, new Document("line", "hashed"));

        assertThatThrownBy(() -> Friends.queue(db).build().enqueue(JobRequest.of("count", new Document("counter",
                "c0")))).isInstanceOf(UnsafeConfigurationException.class).hasMessageContaining("'jobKeys'")
                .hasMessageContaining("led by _id");
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).countDocuments()).isZero();
    }

    @Test
    void shouldRunWithKeyLinesAndSchedulesShardedOnIdAndJobsUnsharded() {
        sharding.shard(db, JobQueueConfig.DEFAULT_KEYS_COLLECTION, new Document("_id", "hashed"));
        sharding.shard(db, JobQueueConfig.DEFAULT_SCHEDULES_COLLECTION, new Document("_id", "hashed"));
        Friends.seedCounters(db, 1);
        JobQueue queue = Friends.queue(db).build();
        queue.ensureIndexes();

        queue.enqueue(JobRequest.of("count", new Document("counter", "c0")).withOrderingKey("c0"));
        assertThat(queue.processNext()).isPresent();

        assertThat(queue.setupProblems()).isEmpty();
        assertThat(db.getCollection(Friends.COUNTERS).find().first().getLong("n")).isEqualTo(1L);
    }
}
