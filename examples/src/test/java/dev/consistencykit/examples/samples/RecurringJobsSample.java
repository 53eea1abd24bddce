package dev.consistencykit.examples.samples;

import java.time.Duration;
import java.time.ZoneId;
import java.util.Optional;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.jobqueue.RecurringJob;
import dev.consistencykit.jobqueue.Schedule;

/** The recurring-jobs page's sample. */
public final class RecurringJobsSample {

    private RecurringJobsSample() {
    }

    /** Runs the sample on {@code db}. */
    public static void run(MongoDatabase db) {
        // README:start
        JobQueue queue = JobQueue.builder(db)
                .handler("report", ctx -> sendReport(ctx.payload()))
                .handler("sweep", ctx -> { }).build();
        queue.ensureIndexes();
        // every process may register its schedules at start: the same definition again writes nothing
        queue.schedule("nightly-report", Schedule.cron("0 3 * * *", ZoneId.of("Europe/Paris")),
                JobRequest.of("report", new Document("kind", "daily")).withMaxAttempts(3));
        queue.schedule("sweep", Schedule.fixedDelay(Duration.ofMinutes(5)), JobRequest.of("sweep", null));
        queue.fireSchedules();                 // workers (queue.startWorkers(4)) fire due occurrences beside their claims
        // next run, last run, last job
        Optional<RecurringJob> nightly = queue.operator().recurringJob("nightly-report");
        queue.unschedule("sweep");             // nothing fires after this returns; a fired occurrence still runs
        // README:end
        Samples.check(nightly.orElseThrow().nextRun().isPresent(), "the nightly report has a next run");
        Samples.check(queue.processNext().isPresent(), "the sweep's first occurrence was due at once and ran");
        Samples.check(queue.operator().recurringJob("sweep").isEmpty(), "the sweep is unscheduled");
    }

    private static void sendReport(Document payload) {
        Samples.check(payload.getString("kind") != null, "a report has a kind");
    }
}
