package dev.consistencykit.jobqueue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.IndexCoverage;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * An operator's search across states ({@link JobQueueOperator#jobs}): by type whatever the state, by state, by the time
 * of the enqueue, by an id as printed, newest first, every condition literal, every query served by an index.
 */
@ExtendWith(MongoTestExtension.class)
class JobSearchTest {

    private static JobQueue queue(MongoDatabase db) {
        return JobQueue.builder(db).retryPolicy(Friends.FAST_RETRY)
                .handler("mail", ctx -> { })
                .handler("fail", ctx -> {
                    throw new IllegalStateException("smtp down");
                })
                .build();
    }

    @Test
    void shouldFindJobsOfATypeInEveryStateNewestFirst(MongoDatabase db) throws Exception {
        JobQueue queue = queue(db);
        queue.ensureIndexes();
        queue.enqueue(JobRequest.of("mail", new Document("n", 1)).withId(OperationId.of("m1")));
        Thread.sleep(5);   // enqueuedAt is the server's time, in milliseconds
        queue.enqueue(JobRequest.of("fail", new Document("n", 2)).withId(OperationId.of("f1")).withMaxAttempts(1));
        Thread.sleep(5);
        assertThat(queue.processNext()).isPresent();
        assertThat(queue.processNext()).isPresent();
        queue.enqueue(JobRequest.of("mail", new Document("n", 3)).withId(OperationId.of("m2"))
                .delayedBy(Duration.ofHours(1)));

        List<FoundJob> mail = queue.operator().jobs(JobSearch.all().ofType("mail"), 10);
        assertThat(mail).extracting(FoundJob::id).containsExactly("m2", "m1");
        assertThat(mail).extracting(FoundJob::state).containsExactly(JobState.TODO, JobState.DONE);
        assertThat(mail.get(0).enqueuedAt()).isPresent();
        assertThat(mail.get(0).runAt().orElseThrow()).isAfter(mail.get(0).enqueuedAt().orElseThrow());

        List<FoundJob> dead = queue.operator().jobs(JobSearch.all().inStates(JobState.DEAD), 10);
        assertThat(dead).extracting(FoundJob::id).containsExactly("f1");
        assertThat(dead.get(0).lastError().orElseThrow()).contains("smtp down");
        assertThat(dead.get(0).attempts()).isEqualTo(1);

        assertThat(queue.operator().jobs(JobSearch.all(), 10)).extracting(FoundJob::id).containsExactly("m2", "f1", "m1");
        assertThat(queue.operator().jobs(JobSearch.all(), 2)).extracting(FoundJob::id).containsExactly("m2", "f1");
        assertThat(queue.operator().jobs(JobSearch.all().ofType("mail").inStates(JobState.DONE, JobState.DEAD), 10))
                .extracting(FoundJob::id).containsExactly("m1");
        Instant m1 = mail.get(1).enqueuedAt().orElseThrow();
        assertThat(queue.operator().jobs(JobSearch.all().enqueuedBefore(m1.plusMillis(1)), 10)).extracting(FoundJob::id)
                .containsExactly("m1");
        assertThat(queue.operator().jobs(JobSearch.all().enqueuedFrom(m1.plusMillis(1)), 10)).extracting(FoundJob::id)
                .containsExactly("m2", "f1");
        assertThat(queue.operator().jobs(JobSearch.ids(List.of(OperationId.of("m1"), OperationId.of("none"))), 10))
                .extracting(FoundJob::id).containsExactly("m1");
    }

    @Test
    void shouldFindAJobEnqueuedWithoutAnIdByItsIdAsPrinted(MongoDatabase db) {
        JobQueue queue = queue(db);
        queue.ensureIndexes();
        OperationId id = queue.enqueue(JobRequest.of("mail", new Document()));

        List<FoundJob> found = queue.operator().jobs(JobSearch.printed(List.of(id.toString())), 10);

        assertThat(found).extracting(FoundJob::id).containsExactly(id.value());
    }

    @Test
    void shouldMatchEveryConditionAsALiteralAndRefuseAnEmptyRange(MongoDatabase db) {
        JobQueue queue = queue(db);
        queue.ensureIndexes();
        queue.enqueue(JobRequest.of("mail", new Document()).withId(OperationId.of("m1")));

        assertThat(queue.operator().jobs(JobSearch.all().ofType("{\"$ne\": 1}"), 10)).isEmpty();
        assertThat(queue.operator().jobs(JobSearch.all().ofType("ma.*"), 10)).isEmpty();
        Instant now = Instant.now();
        assertThatThrownBy(() -> JobSearch.all().enqueuedFrom(now).enqueuedBefore(now))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("range is empty");
        assertThatThrownBy(() -> queue.operator().jobs(JobSearch.all(), 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> queue.operator().jobs(JobSearch.all(), JobQueueOperator.MAX_FOUND + 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> JobSearch.all().ofType("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> JobSearch.all().inStates()).isInstanceOf(IllegalArgumentException.class);
        assertThat(JobSearch.all().ofType("mail").inStates(JobState.DEAD)).hasToString("jobs with type mail, state"
                + " [dead]");
    }

    @Test
    void shouldServeEverySearchFromAnIndex(MongoTarget target, MongoDatabase db) {
        JobQueue queue = queue(db);
        queue.ensureIndexes();
        queue.enqueue(JobRequest.of("mail", new Document()).withId(OperationId.of("m1")));
        try (IndexCoverage coverage = IndexCoverage.attach(target, db.getName())) {
            queue.operator().jobs(JobSearch.all(), 10);
            queue.operator().jobs(JobSearch.all().ofType("mail"), 10);
            queue.operator().jobs(JobSearch.all().inStates(JobState.DEAD), 10);
            queue.operator().jobs(JobSearch.all().enqueuedFrom(Instant.now().minusSeconds(60)), 10);
            queue.operator().jobs(JobSearch.ids(List.of(OperationId.of("m1"))), 10);

            assertThat(coverage.uncovered(db)).isEmpty();
        }
        assertThat(db.getCollection(JobQueueConfig.DEFAULT_COLLECTION).listIndexes().map(d -> d.getString("name"))
                .into(new java.util.ArrayList<>())).contains("type_enqueued", "state_enqueued");
    }
}
