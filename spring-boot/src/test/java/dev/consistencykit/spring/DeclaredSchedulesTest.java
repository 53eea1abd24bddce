package dev.consistencykit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.jobqueue.RecurringJob;
import dev.consistencykit.jobqueue.Schedule;
import dev.consistencykit.testkit.MongoTarget;

/**
 * Recurring jobs declared in properties ({@code consistency-kit.job-queue.<q>.schedules.<name>.*}) are what the queue
 * holds after start: declared ones registered, changed ones replaced, switched-off and undeclared ones removed (unless
 * kept), and a definition that cannot be one fails the start naming its property.
 */
class DeclaredSchedulesTest {

    private static final String Q = "consistency-kit.job-queue.reports.";

    private String database;

    @BeforeEach
    void database() {
        database = MongoTarget.freshDatabaseName("schedules");
    }

    @AfterEach
    void drop() {
        MongoTarget.fromEnvironment().client().getDatabase(database).drop();
    }

    private JobQueue queue() {
        return JobQueue.builder(MongoTarget.fromEnvironment().client().getDatabase(database)).name("reports").build();
    }

    private List<RecurringJob> started(String... properties) {
        List<String> all = new ArrayList<>(List.of("consistency-kit.maintenance.enabled=false"));
        all.addAll(List.of(properties));
        List<RecurringJob> out = new ArrayList<>();
        TestContexts.runner(database).withPropertyValues(all.toArray(new String[0])).run(context -> {
            assertThat(context).hasNotFailed();
            out.addAll(context.getBean("reports", JobQueue.class).operator().recurringJobs(0, 100));
        });
        return out;
    }

    private static Optional<RecurringJob> named(List<RecurringJob> jobs, String name) {
        return jobs.stream().filter(j -> j.name().equals(name)).findFirst();
    }

    @Test
    void shouldHoldWhatThePropertiesDeclareAfterStart() {
        JobQueue before = queue();
        before.ensureIndexes();
        before.schedule("legacy", Schedule.fixedDelay(Duration.ofMinutes(1)), JobRequest.of("old", new Document()));
        before.schedule("retired", Schedule.cron("0 4 * * *"), JobRequest.of("old", new Document()));

        List<RecurringJob> jobs = started(Q + "schedules.nightly.cron=0 3 * * *",
                Q + "schedules.nightly.zone=Europe/Paris", Q + "schedules.nightly.missed-runs=each",
                Q + "schedules.nightly.type=report", Q + "schedules.nightly.payload={\"kind\": \"daily\", \"n\": 2}",
                Q + "schedules.sweep.fixed-delay=5m", Q + "schedules.sweep.type=sweep",
                Q + "schedules.retired.cron=0 4 * * *", Q + "schedules.retired.type=old",
                Q + "schedules.retired.enabled=false");

        assertThat(jobs).extracting(RecurringJob::name).containsExactlyInAnyOrder("nightly", "sweep");
        RecurringJob nightly = named(jobs, "nightly").orElseThrow();
        assertThat(nightly.schedule()).isEqualTo(Schedule.cron("0 3 * * *", java.time.ZoneId.of("Europe/Paris"))
                .missedRuns(Schedule.MissedRuns.EACH));
        assertThat(nightly.type()).isEqualTo("report");
        java.util.concurrent.atomic.AtomicReference<Object> payload = new java.util.concurrent.atomic.AtomicReference<>();
        JobQueue worker = JobQueue.builder(MongoTarget.fromEnvironment().client().getDatabase(database)).name("reports")
                .handler("report", ctx -> payload.set(ctx.payload())).build();
        assertThat(worker.operator().triggerSchedule("nightly")).isPresent();
        assertThat(worker.processNext()).hasValueSatisfying(r -> assertThat(r.isCommitted()).isTrue());
        assertThat(payload.get()).isEqualTo(new Document("kind", "daily").append("n", 2));
        assertThat(named(jobs, "sweep").orElseThrow().schedule()).isEqualTo(Schedule.fixedDelay(Duration.ofMinutes(5)));
    }

    @Test
    void shouldReplaceAChangedDefinitionAndKeepUndeclaredOnesWhenAsked() {
        JobQueue before = queue();
        before.ensureIndexes();
        before.schedule("legacy", Schedule.fixedDelay(Duration.ofMinutes(1)), JobRequest.of("old", new Document()));
        started(Q + "schedules.nightly.cron=0 3 * * *", Q + "schedules.nightly.type=report",
                Q + "keep-undeclared-schedules=true");

        List<RecurringJob> jobs = started(Q + "schedules.nightly.cron=0 5 * * *", Q + "schedules.nightly.type=report",
                Q + "keep-undeclared-schedules=true");

        assertThat(jobs).extracting(RecurringJob::name).containsExactlyInAnyOrder("nightly", "legacy");
        assertThat(named(jobs, "nightly").orElseThrow().schedule()).isEqualTo(Schedule.cron("0 5 * * *"));
    }

    @Test
    void shouldFailTheStartOnADefinitionThatIsNone() {
        Map<List<String>, String> refused = Map.of(
                List.of(Q + "schedules.a.type=report"), Q + "schedules.a needs either cron or fixed-delay",
                List.of(Q + "schedules.a.cron=0 3 * * *", Q + "schedules.a.fixed-delay=1m", Q + "schedules.a.type=r"),
                Q + "schedules.a needs either cron or fixed-delay, not both",
                List.of(Q + "schedules.a.cron=61 3 * * *", Q + "schedules.a.type=r"), Q + "schedules.a: ",
                List.of(Q + "schedules.a.cron=0 3 * * *"), Q + "schedules.a.type is required",
                List.of(Q + "schedules.a.cron=0 3 * * *", Q + "schedules.a.type=r", Q + "schedules.a.missed-runs=all"),
                Q + "schedules.a.missed-runs=all is none of",
                List.of(Q + "schedules.a.cron=0 3 * * *", Q + "schedules.a.type=r", Q + "schedules.a.payload=[1]"),
                Q + "schedules.a.payload is no JSON document",
                List.of(Q + "schedules.a.crn=0 3 * * *", Q + "schedules.a.type=r"),
                Q + "schedules.a.crn is not a setting");
        refused.forEach((properties, message) -> {
            List<String> all = new ArrayList<>(List.of("consistency-kit.maintenance.enabled=false"));
            all.addAll(properties);
            TestContexts.runner(database).withPropertyValues(all.toArray(new String[0])).run(context -> {
                assertThat(context).as(properties.toString()).hasFailed();
                StringBuilder chain = new StringBuilder();
                for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
                    chain.append(t.getMessage()).append('\n');
                }
                assertThat(chain.toString()).as(properties.toString()).contains("consistency-kit: " + message);
            });
        });
    }
}
