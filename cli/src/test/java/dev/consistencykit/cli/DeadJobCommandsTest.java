package dev.consistencykit.cli;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobQueueListener;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.jobqueue.JobWorkers;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** {@code inspect}, {@code recover}, {@code replay} and {@code discard} on dead jobs, with the application's workers running. */
@ExtendWith(MongoTestExtension.class)
class DeadJobCommandsTest {

    private static String uri() {
        return MongoTarget.fromEnvironment().connectionString().getConnectionString();
    }

    private static String state(MongoDatabase db, String id) {
        Document job = db.getCollection("jobs").find(eq("_id", id)).first();
        return job == null ? "deleted" : job.getString("state");
    }

    @Test
    void shouldListRecoverReplayDiscardAndDeleteDeadJobsWhileWorkersRun(MongoDatabase db) throws Exception {
        AtomicInteger runs = new AtomicInteger();
        Semaphore died = new Semaphore(0);
        JobQueue queue = JobQueue.builder(db).retryBackoff(Duration.ofMillis(1), Duration.ofMillis(1))
                .listener(new JobQueueListener() {
                    @Override
                    public void onDead(OperationId id, String type, String error, Throwable thrown) {
                        died.release();   // called once the job is stored dead
                    }
                })
                .handler("mail", ctx -> {
                    runs.incrementAndGet();
                    throw new IllegalStateException("smtp refused " + ctx.payload().getString("to"));
                })
                .handler("sms", ctx -> {
                    throw new IllegalStateException("no gateway");
                }).build();
        queue.ensureIndexes();
        for (String id : new String[] {"m1", "m2", "m3"}) {
            queue.apply(JobRequest.of("mail", new Document("to", id)).withId(OperationId.of(id)).withMaxAttempts(1));
        }
        queue.apply(JobRequest.of("sms", new Document()).withId(OperationId.of("s1")).withMaxAttempts(1));
        String[] common = {"--uri", uri(), "--json"};

        CliTestSupport.Run inspect = CliTestSupport.run(common[0], common[1], common[2], "inspect", "--database",
                db.getName());
        assertThat(inspect.exitCode()).as(inspect.out()).isEqualTo(ExitCodes.PROBLEMS_FOUND);
        assertThat(inspect.lastLineJson().getList("interrupted", Document.class)).extracting(d -> d.getString("state"))
                .containsOnly("dead").hasSize(4);
        CliTestSupport.Run recover = CliTestSupport.run("--uri", uri(), "recover", "--database", db.getName());
        assertThat(recover.out()).contains("4 dead, waiting for an operator").doesNotContain("still in flight");

        died.drainPermits();   // the four deaths of the set-up, each in its apply
        try (JobWorkers workers = queue.startWorkers(2)) {   // the application's workers, racing every command
            CliTestSupport.Run unselected = CliTestSupport.run("--uri", uri(), "replay", "--database", db.getName());
            assertThat(unselected.exitCode()).isEqualTo(ExitCodes.USAGE);
            assertThat(unselected.err()).contains("--all for every one");

            CliTestSupport.Run replay = CliTestSupport.run("--uri", uri(), "--json", "replay", "--database",
                    db.getName(), "--type", "mail", "--error-containing", "refused m2");
            assertThat(replay.exitCode()).as(replay.err()).isZero();
            assertThat(replay.lastLineJson().get("replayed", Number.class).longValue()).isEqualTo(1L);
            assertThat(died.tryAcquire(2, TimeUnit.MINUTES)).as("a worker ran it again; it failed again").isTrue();
            assertThat(state(db, "m2")).isEqualTo("dead");

            CliTestSupport.Run discard = CliTestSupport.run("--uri", uri(), "--json", "discard", "--database",
                    db.getName(), "--id", "m1", "--id", "m2");
            assertThat(discard.exitCode()).as(discard.err()).isZero();
            assertThat(discard.lastLineJson().get("discarded", Number.class).longValue()).isEqualTo(2L);

            CliTestSupport.Run delete = CliTestSupport.run("--uri", uri(), "--json", "discard", "--delete",
                    "--database", db.getName(), "--type", "sms");
            assertThat(delete.lastLineJson().get("deleted", Number.class).longValue()).isEqualTo(1L);
            CliTestSupport.Run wrongQueue = CliTestSupport.run("--uri", uri(), "replay", "--all", "--database",
                    db.getName(), "--queue", "nope");
            assertThat(wrongQueue.exitCode()).isEqualTo(ExitCodes.USAGE);
            assertThat(wrongQueue.err()).contains("no job queue named nope");
            assertThat(workers.health().alive()).isEqualTo(2);
        }

        assertThat(state(db, "m1")).isEqualTo("discarded");
        assertThat(state(db, "m2")).isEqualTo("discarded");
        assertThat(state(db, "m3")).isEqualTo("dead");
        // the queue that enqueued it still holds it (a late retry of its write must find it): reduced to its id
        assertThat(db.getCollection("jobs").find(eq("_id", "s1")).first()).containsKey("compactedAt")
                .doesNotContainKeys("payload", "lastError");
        assertThat(runs.get()).isEqualTo(4);
        CliTestSupport.Run last = CliTestSupport.run("--uri", uri(), "--json", "inspect", "--database", db.getName());
        assertThat(last.lastLineJson().getInteger("count")).isEqualTo(1);
    }
    /**
     * A job enqueued without an id of its own is selected by its id as inspect and the logs print it (bare hex, or a
     * string id quoted as a log line quotes it); ids that select no dead job exit 1 and say so, never "replayed 0".
     */
    @Test
    void shouldSelectADeadJobByItsIdAsPrintedAndFailWhenTheIdsSelectNone(MongoDatabase db) {
        JobQueue queue = JobQueue.builder(db).handler("mail", ctx -> {
            throw new IllegalStateException("smtp refused");
        }).build();
        queue.ensureIndexes();
        OperationId generated = queue.apply(JobRequest.of("mail", new Document()).withMaxAttempts(1)).id();
        queue.apply(JobRequest.of("mail", new Document()).withId(OperationId.of("m1")).withMaxAttempts(1));
        assertThat(generated.value()).isInstanceOf(org.bson.types.ObjectId.class);

        CliTestSupport.Run byHex = CliTestSupport.run("--uri", uri(), "--json", "discard", "--database", db.getName(),
                "--id", generated.toString());
        assertThat(byHex.exitCode()).as(byHex.err()).isZero();
        assertThat(byHex.lastLineJson().get("discarded", Number.class).longValue()).isEqualTo(1L);
        CliTestSupport.Run quoted = CliTestSupport.run("--uri", uri(), "--json", "discard", "--database", db.getName(),
                "--id", "'m1'");
        assertThat(quoted.lastLineJson().get("discarded", Number.class).longValue()).isEqualTo(1L);

        CliTestSupport.Run none = CliTestSupport.run("--uri", uri(), "replay", "--database", db.getName(), "--id",
                generated.toString(), "--id", "nope");
        assertThat(none.exitCode()).isEqualTo(ExitCodes.PROBLEMS_FOUND);
        assertThat(none.err()).contains("no dead job with id " + generated + ", nope");
    }
}
