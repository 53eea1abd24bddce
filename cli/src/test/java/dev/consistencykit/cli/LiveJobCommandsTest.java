package dev.consistencykit.cli;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Date;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** {@code cancel}, {@code reschedule} and {@code rerun} on jobs selected by their ids as printed. */
@ExtendWith(MongoTestExtension.class)
class LiveJobCommandsTest {

    private static String uri() {
        return MongoTarget.fromEnvironment().connectionString().getConnectionString();
    }

    private static Document job(MongoDatabase db, Object id) {
        return db.getCollection("jobs").find(eq("_id", id)).first();
    }

    @Test
    void shouldCancelRescheduleAndRerunJobsByTheirIdsAsPrinted(MongoDatabase db) {
        JobQueue queue = JobQueue.builder(db).handler("mail", ctx -> { }).build();
        queue.ensureIndexes();
        OperationId generated = queue.enqueue(JobRequest.of("mail", new Document()).delayedBy(Duration.ofHours(1)));
        queue.enqueue(JobRequest.of("mail", new Document()).withId(OperationId.of("later"))
                .delayedBy(Duration.ofHours(1)));
        queue.apply(JobRequest.of("mail", new Document("to", "ann")).withId(OperationId.of("sent")));

        CliTestSupport.Run cancel = CliTestSupport.run("--uri", uri(), "--json", "cancel", "--database",
                db.getName(), "--id", generated.toString());
        assertThat(cancel.exitCode()).as(cancel.err()).isZero();
        assertThat(cancel.lastLineJson().get("canceled", Number.class).intValue()).isEqualTo(1);
        assertThat(job(db, generated.value()).getString("state")).isEqualTo("discarded");

        java.time.Instant before = java.time.Instant.now();   // --in counts from when the command runs, after this
        CliTestSupport.Run reschedule = CliTestSupport.run("--uri", uri(), "reschedule", "--database", db.getName(),
                "--id", "'later'", "--in", "2h");
        assertThat(reschedule.exitCode()).as(reschedule.err()).isZero();
        assertThat(job(db, "later").getDate("runAt")).isAfterOrEqualTo(Date.from(before.plus(Duration.ofHours(2))
                .truncatedTo(java.time.temporal.ChronoUnit.MILLIS)));

        CliTestSupport.Run rerun = CliTestSupport.run("--uri", uri(), "--json", "rerun", "--database", db.getName(),
                "--id", "sent");
        assertThat(rerun.exitCode()).as(rerun.err()).isZero();
        String again = rerun.lastLineJson().getList("jobs", Document.class).get(0).getString("result");
        assertThat(again).startsWith("sent/rerun/");
        assertThat(job(db, again).getString("state")).isEqualTo("todo");

        CliTestSupport.Run none = CliTestSupport.run("--uri", uri(), "cancel", "--database", db.getName(), "--id",
                "sent", "--id", "nope");
        assertThat(none.exitCode()).isEqualTo(ExitCodes.PROBLEMS_FOUND);
        assertThat(none.err()).contains("no job it could act on with id sent, nope");

        CliTestSupport.Run bad = CliTestSupport.run("--uri", uri(), "reschedule", "--database", db.getName(), "--id",
                "later", "--at", "tomorrow");
        assertThat(bad.exitCode()).isEqualTo(ExitCodes.USAGE);
    }
}
