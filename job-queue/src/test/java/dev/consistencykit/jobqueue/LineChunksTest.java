package dev.consistencykit.jobqueue;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * A key's line is kept in documents of at most a chunk of entries: the key's document holds the newest, chunks of
 * their own the older ones, oldest first. A long line keeps its order across them and leaves nothing once it ran;
 * a chunk that no line reads (written late by a paused join, or left by a line since deleted) is deleted by recovery,
 * and one whose writer died before putting it in its line is put there.
 */
@ExtendWith(MongoTestExtension.class)
class LineChunksTest {

    private static MongoCollection<Document> keys(MongoDatabase db) {
        return db.getCollection(JobQueueConfig.DEFAULT_KEYS_COLLECTION);
    }

    private static void drain(JobQueue queue) {
        while (queue.processNext().isPresent()) {
            // run every job that can run
        }
    }

    @Test
    void shouldKeepALongLineInChunksAndRunItInOrder(MongoDatabase db) {
        OrderingKeysTest.seedLogs(db, "a");
        JobQueue queue = OrderingKeysTest.queue(db).build();
        queue.ensureIndexes();
        for (int n = 0; n < 250; n++) {
            queue.enqueue(OrderingKeysTest.step("a", n));
        }

        List<Integer> sizes = new ArrayList<>();
        for (Document d : keys(db).find()) {
            sizes.add(d.getList("line", Object.class).size());
        }
        assertThat(sizes).as("entries per document of the line").hasSize(3).allMatch(n -> n <= 100);
        assertThat(sizes.stream().mapToInt(Integer::intValue).sum()).isEqualTo(250);

        drain(queue);
        List<Object> seen = OrderingKeysTest.seen(db, "a");
        assertThat(seen).hasSize(250).isSorted();
        assertThat(keys(db).countDocuments()).as("documents of a line that ran").isZero();
    }

    /**
     * A join behind an ordering key's chunks does not move the line (its job is not at the head) and does not count
     * as a move: so when the process that ended the head died before moving the line on, recovery still finds the
     * line quiet, however many jobs keep joining it, and moves it on.
     */
    @Test
    void shouldMoveOnALineWhoseEnderDiedWhileJobsKeepJoiningIt(MongoDatabase db) {
        OrderingKeysTest.seedLogs(db, "k");
        JobQueue anHourAgo = OrderingKeysTest.queue(db).maxKeyBacklog(4).serverClock(ServerClock.unsynchronized(
                Clock.offset(Clock.systemUTC(), Duration.ofHours(-1)))).build();
        anHourAgo.ensureIndexes();
        anHourAgo.enqueue(OrderingKeysTest.step("k", 1));   // the line made an hour ago: its head runs
        JobQueue queue = OrderingKeysTest.queue(db).maxKeyBacklog(4).build();
        queue.enqueue(OrderingKeysTest.step("k", 2));
        queue.enqueue(OrderingKeysTest.step("k", 3));
        // the head's worker recorded it done, then died before moving the line on
        db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).updateOne(eq("_id", "k-1"),
                com.mongodb.client.model.Updates.set("state", "done"));
        assertThat(state(db, "k-2")).isEqualTo("awaiting");

        queue.recover(Duration.ofMinutes(30));

        assertThat(state(db, "k-2")).as("the next job, once recovery moved the quiet line on").isEqualTo("todo");
        assertThat(state(db, "k-3")).isEqualTo("awaiting");
    }

    private static String state(MongoDatabase db, String id) {
        return db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("_id", id)).first().getString("state");
    }

    @Test
    void shouldDeleteAChunkNoLineReads(MongoDatabase db) {
        OrderingKeysTest.seedLogs(db, "k");
        JobQueue queue = OrderingKeysTest.queue(db).maxKeyBacklog(4).build();
        queue.ensureIndexes();
        queue.enqueue(OrderingKeysTest.step("k", 1));
        queue.enqueue(OrderingKeysTest.step("k", 2));
        Document line = keys(db).find(eq("_id", "order:k")).first();
        // a chunk of a line since deleted, and one behind this line's head, as joins that paused would write them
        Document entry = new Document("j", "k-1").append("n", "x");
        keys(db).insertOne(new Document("_id", new Document("k", "order:k").append("l", "gone").append("c", 0))
                .append("line", List.of(entry)).append("movedAt", new Date(0)));
        keys(db).insertOne(new Document("_id", new Document("k", "order:k").append("l", line.get("lineId"))
                .append("c", -1)).append("line", List.of(entry)).append("movedAt", new Date(0)));

        queue.recover(Duration.ZERO);
        drain(queue);

        assertThat(OrderingKeysTest.seen(db, "k")).containsExactly(1, 2);
        assertThat(keys(db).countDocuments()).as("documents left").isZero();
    }

    @Test
    void shouldPutInItsLineAChunkWhoseWriterDiedBeforeIt(MongoDatabase db) {
        OrderingKeysTest.seedLogs(db, "k");
        JobQueue queue = OrderingKeysTest.queue(db).maxKeyBacklog(4)
                .retryBackoff(Duration.ofDays(1), Duration.ofDays(1)).build();
        queue.ensureIndexes();
        OrderingKeysTest.failNext("k-1", 1);
        queue.enqueue(OrderingKeysTest.step("k", 1));
        assertThat(queue.processNext()).isPresent();   // failed, due tomorrow: it holds the head meanwhile
        Document line = keys(db).find(eq("_id", "order:k")).first();
        // a join wrote the key's entries into the line's next chunk, then died before the key's document let them go
        keys(db).insertOne(new Document("_id", new Document("k", "order:k").append("l", line.get("lineId"))
                .append("c", line.get("nextChunk"))).append("line", line.get("line")).append("movedAt", new Date(0)));

        queue.recover(Duration.ZERO);
        Document after = keys(db).find(eq("_id", "order:k")).first();
        assertThat(after.getList("line", Object.class)).as("entries left on the key's document").isEmpty();
        assertThat(after.getInteger("chunks")).isEqualTo(1);

        queue.enqueue(OrderingKeysTest.step("k", 2));
        // due now instead of tomorrow
        assertThat(queue.operator().reschedule(OperationId.of("k-1"), java.time.Instant.EPOCH)).isTrue();
        drain(queue);
        assertThat(OrderingKeysTest.seen(db, "k")).containsExactly(1, 2);
        assertThat(keys(db).countDocuments()).as("documents left").isZero();
    }
}
