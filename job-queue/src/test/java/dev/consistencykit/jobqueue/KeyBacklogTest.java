package dev.consistencykit.jobqueue;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.or;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * A key's line holds at most {@code maxKeyBacklog} jobs: one past it is refused, typed, and discarded, before the
 * line's document could grow to the server's document limit; the key's other jobs run as before, and once its backlog
 * has gone down the key takes jobs again.
 */
@ExtendWith(MongoTestExtension.class)
class KeyBacklogTest {

    private static JobRequest count(String id) {
        return JobRequest.of("count", new Document("counter", "c0")).withId(OperationId.of(id));
    }

    /** The entries of line {@code key}, on the key's document and in its chunks. */
    private static int lineLength(MongoDatabase db, String key) {
        int n = 0;
        for (Document d : db.getCollection(JobQueueConfig.DEFAULT_KEYS_COLLECTION).find(or(eq("_id", key),
                eq("_id.k", key)))) {
            n += d.getList("line", Object.class).size();
        }
        return n;
    }

    @Test
    void shouldRefuseAJobPastAKeysBacklogAndTakeJobsAgainOnceItWentDown(MongoDatabase db) {
        Friends.seedCounters(db, 1);
        JobQueue queue = Friends.queue(db).maxKeyBacklog(3).build();
        queue.ensureIndexes();
        for (String id : List.of("a", "b", "c")) {
            queue.enqueue(count(id).withOrderingKey("k"));
        }

        assertThatThrownBy(() -> queue.enqueue(count("d").withOrderingKey("k")))
                .isInstanceOf(LineFullException.class).hasMessageContaining("maxKeyBacklog");
        assertThatCode(() -> queue.enqueue(count("e").withConcurrencyKey("k", 2)))
                .as("a concurrency key of the same name is another line").doesNotThrowAnyException();

        Document refused = db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("_id", "d")).first();
        assertThat(refused.getString("state")).isEqualTo("discarded");
        assertThat(refused.getString("lastError")).contains("maxKeyBacklog");
        assertThat(lineLength(db, "order:k")).isEqualTo(3);

        assertThat(queue.processNext()).isPresent();
        queue.enqueue(count("f").withOrderingKey("k"));
        while (queue.processNext().isPresent()) {
            // run the rest
        }
        Document counter = db.getCollection(Friends.COUNTERS).find(eq("_id", "c0")).first();
        assertThat(counter.getList(Friends.WITNESS, Object.class)).containsExactlyInAnyOrder("a", "b", "c", "e", "f");
        assertThat(Friends.invariants(db)).isEmpty();
    }
}
