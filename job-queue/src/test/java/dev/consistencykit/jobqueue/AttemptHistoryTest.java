package dev.consistencykit.jobqueue;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * A job keeps its last attempts, bounded: when each started, how long it took, the worker, the outcome and the error,
 * written with the outcome; a lease lost is an attempt too; an error's text is bounded whatever the handler throws.
 */
@ExtendWith(MongoTestExtension.class)
class AttemptHistoryTest {

    private static List<Document> history(MongoDatabase db, String id) {
        return db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("_id", id)).first()
                .getList("history", Document.class, List.of());
    }

    @Test
    void shouldKeepTheLastAttemptsWithTheirOutcomesAndErrors(MongoDatabase db) {
        AtomicInteger calls = new AtomicInteger();
        JobQueue queue = Friends.queue(db).attemptHistory(2).handler("flaky", ctx -> {
            if (calls.incrementAndGet() <= 2) {
                throw new IllegalStateException("attempt " + calls.get() + " failed");
            }
        }).build();
        queue.enqueue(JobRequest.of("flaky", null).withId(OperationId.of("f")));
        for (int i = 0; i < 3; i++) {
            // due at once, whatever its back-off
            assertThat(queue.operator().reschedule(OperationId.of("f"), java.time.Instant.EPOCH)).isTrue();
            assertThat(queue.processNext()).isPresent();
        }

        List<Document> history = history(db, "f");
        assertThat(history).extracting(h -> h.getString("outcome")).containsExactly("failed", "done");
        assertThat(history.get(0).getString("error")).isEqualTo("IllegalStateException: attempt 2 failed");
        assertThat(history).allSatisfy(h -> {
            assertThat(h.get("start")).isInstanceOf(Date.class);
            assertThat(h.getLong("ms")).isNotNegative();
            assertThat(h.getString("worker")).isNotBlank();
        });
    }

    @Test
    void shouldRecordALostLeaseAndBoundAnErrorsText(MongoDatabase db) {
        JobQueue queue = Friends.queue(db).handler("loud", ctx -> {
            throw new IllegalStateException("x".repeat(5_000_000));
        }).handler("slow", ctx -> { }).build();
        queue.enqueue(JobRequest.of("loud", null).withId(OperationId.of("loud")));
        assertThat(queue.processNext()).isPresent();
        Document loud = db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("_id", "loud")).first();
        assertThat(loud.getString("state")).isEqualTo("failed");
        assertThat(loud.getString("lastError")).hasSizeLessThan(4_100).endsWith("characters more)");

        queue.enqueue(JobRequest.of("slow", null).withId(OperationId.of("slow")));
        db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).updateOne(eq("_id", "slow"), Updates.combine(
                Updates.set("state", "processing"), Updates.set("owner", "gone"), Updates.currentDate("claimedAt"),
                Updates.set("leaseExpiresAt", new Date(0)), Updates.inc("attempts", 1)));
        queue.requeue(Duration.ofSeconds(1));
        assertThat(history(db, "slow")).singleElement().satisfies(h -> {
            assertThat(h.getString("worker")).isEqualTo("gone");
            assertThat(h.getString("error")).isEqualTo("the worker lost its lease");
        });
    }
    /**
     * A failing handler's stack reaches every place an operator looks: the job's history keeps the top frames and its
     * causes (bounded), the listener gets the throwable itself, and the failed and dead lines log it (FailureLogTest).
     */
    @Test
    void shouldKeepTheTopFramesOfAFailureAndHandTheListenerWhatWasThrown(MongoDatabase db) {
        List<Throwable> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
        IllegalStateException thrown = new IllegalStateException("smtp refused",
                new java.io.IOException("connection reset"));
        JobQueue queue = Friends.queue(db).listener(new JobQueueListener() {
            @Override
            public void onFailed(OperationId id, String type, int attempt, String error, Throwable t) {
                heard.add(t);
            }

            @Override
            public void onDead(OperationId id, String type, String error, Throwable t) {
                heard.add(t);
            }
        }).handler("mail", ctx -> {
            throw thrown;
        }).build();
        queue.enqueue(JobRequest.of("mail", null).withId(OperationId.of("m")).withMaxAttempts(2));
        for (int i = 0; i < 2; i++) {
            assertThat(queue.operator().reschedule(OperationId.of("m"), java.time.Instant.EPOCH)).isTrue();
            assertThat(queue.processNext()).isPresent();
        }

        assertThat(heard).containsExactly(thrown, thrown);
        List<Document> history = history(db, "m");
        assertThat(history).extracting(h -> h.getString("outcome")).containsExactly("failed", "dead");
        assertThat(history).allSatisfy(h -> {
            List<String> stack = h.getList("stack", String.class);
            assertThat(stack).hasSizeLessThanOrEqualTo(12).allSatisfy(line -> assertThat(line).hasSizeLessThan(400));
            assertThat(stack.get(0)).startsWith("at dev.consistencykit.jobqueue.AttemptHistoryTest");
            assertThat(stack).anySatisfy(line -> assertThat(line).isEqualTo("caused by IOException: connection reset"));
        });
    }

    /**
     * A handler exception whose getMessage() throws still fails the attempt: the job is failed with an error that says
     * so and a history entry, never left processing until its lease ends with the exception escaping processNext().
     */
    @Test
    void shouldFailAnAttemptWhoseExceptionCannotDescribeItself(MongoDatabase db) {
        JobQueue queue = Friends.queue(db).handler("odd", ctx -> {
            throw new IllegalArgumentException() {
                @Override
                public String getMessage() {
                    throw new IllegalStateException("getMessage is broken too");
                }
            };
        }).build();
        queue.enqueue(JobRequest.of("odd", null).withId(OperationId.of("o")));

        assertThat(queue.processNext()).hasValueSatisfying(r -> assertThat(r.reason()).hasValueSatisfying(
                d -> assertThat(d).contains("its message could not be read")));
        Document job = db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).find(eq("_id", "o")).first();
        assertThat(job.getString("state")).isEqualTo("failed");
        assertThat(job.getString("lastError")).contains("getMessage() threw IllegalStateException");
        assertThat(history(db, "o")).singleElement().satisfies(h -> {
            assertThat(h.getString("outcome")).isEqualTo("failed");
            assertThat(h.getList("stack", String.class)).isNotEmpty();
        });
    }
}
