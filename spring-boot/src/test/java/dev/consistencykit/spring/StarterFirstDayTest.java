package dev.consistencykit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.testkit.MongoTarget;

/** What a team sees on its first day: each failed attempt in the log, and a startup failure that says what to set. */
@ExtendWith(OutputCaptureExtension.class)
class StarterFirstDayTest {

    private String database;

    @BeforeEach
    void name() {
        database = MongoTarget.freshDatabaseName("firstday");
    }

    @AfterEach
    void drop() {
        MongoTarget.fromEnvironment().client().getDatabase(database).drop();
    }

    @Test
    void shouldLogOneWarningPerFailedAttemptSayingWhichWhenNextAndWhy(CapturedOutput output) throws Exception {
        JobQueue queue = JobQueue.builder(MongoTarget.fromEnvironment().client().getDatabase(database)).name("mail")
                .retryBackoff(Duration.ofMillis(1), Duration.ofMillis(1))
                .handler("send", ctx -> {
                    throw new IllegalStateException("smtp refused");
                }).build();
        queue.ensureIndexes();
        queue.enqueue(JobRequest.of("send", new Document()).withId(OperationId.of("m1")).withMaxAttempts(3));
        for (int i = 0; i < 200 && queue.status().count("dead") == 0; i++) {
            queue.processNext();
            Thread.sleep(2);
        }

        Matcher failed = Pattern.compile("WARN .*\\[mail\\] job 'm1' of type 'send': attempt (\\d) of 3 failed, next"
                + " attempt at \\S+ \\(in \\d+ ms\\): IllegalStateException: smtp refused").matcher(output.getAll());
        int lines = 0;
        while (failed.find()) {
            lines++;
            assertThat(failed.group(1)).isEqualTo(String.valueOf(lines));
        }
        assertThat(lines).as(output.getAll()).isEqualTo(2);
        assertThat(output.getAll()).containsOnlyOnce("[mail] job 'm1' of type 'send' is dead after attempt 3 of 3"
                + " (replay or discard it): IllegalStateException: smtp refused");
    }

    @Test
    void shouldCountEachJobsOutcomePerTypeInTheApplicationsRegistry() {
        TestContexts.runner(database)
                .withBean(io.micrometer.core.instrument.MeterRegistry.class,
                        io.micrometer.core.instrument.simple.SimpleMeterRegistry::new)
                .withPropertyValues("consistency-kit.job-queue.mail.max-attempts=1")
                .withBean("send", dev.consistencykit.jobqueue.JobHandler.class, () -> ctx -> { })
                .run(context -> {
                    JobQueue mail = context.getBean("mail", JobQueue.class);
                    mail.apply(JobRequest.of("send", new Document()));
                    mail.apply(JobRequest.of("nobody-handles-this", new Document()));
                    io.micrometer.core.instrument.MeterRegistry registry = context.getBean(
                            io.micrometer.core.instrument.MeterRegistry.class);
                    assertThat(registry.get("consistencykit.events").tag("instance", "mail").tag("type", "send")
                            .tag("event", "onDone").counter().count()).isEqualTo(1.0);
                    assertThat(registry.get("consistencykit.events").tag("type", "nobody-handles-this")
                            .tag("event", "onDead").counter().count()).isEqualTo(1.0);
                });
    }

    /**
     * The Actuator's dead-letter writes with the starter's own workers running the queue: replayed jobs run again
     * (and die again), discarded ones never run again, deleted ones are gone or reduced to their id.
     */
    @Test
    void shouldReplayDiscardAndDeleteDeadJobsThroughTheEndpointWhileWorkersRun() {
        java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.Semaphore deaths = new java.util.concurrent.Semaphore(0);
        TestContexts.runner(database)
                .withPropertyValues("consistency-kit.job-queue.mail.workers=2",
                        "consistency-kit.job-queue.mail.max-attempts=1")
                .withBean(dev.consistencykit.jobqueue.JobQueueListener.class,
                        () -> new dev.consistencykit.jobqueue.JobQueueListener() {
                            @Override
                            public void onDead(OperationId id, String type, String error, Throwable thrown) {
                                deaths.release();
                            }
                        })
                .withBean("send", dev.consistencykit.jobqueue.JobHandler.class, () -> ctx -> {
                    runs.incrementAndGet();
                    throw new IllegalStateException("smtp refused " + ctx.payload().getString("to"));
                })
                .run(context -> {
                    JobQueue mail = context.getBean("mail", JobQueue.class);
                    for (String id : java.util.List.of("a", "b", "c", "d")) {
                        mail.enqueue(JobRequest.of("send", new Document("to", id)).withId(OperationId.of(id)));
                    }
                    awaitDead(mail, deaths, 4, 4, runs, 4);
                    ConsistencyKitEndpoint endpoint = context.getBean(ConsistencyKitEndpoint.class);

                    assertThat(endpoint.deadJobs("mail", "replay", "send", "refused a", null, null, null).getBody().jobs())
                            .isEqualTo(1);
                    awaitDead(mail, deaths, 1, 4, runs, 5);   // a worker ran it again; it failed again
                    assertThat(endpoint.deadJobs("mail", "discard", null, null, java.util.List.of("b", "c"), null, null)
                            .getBody().jobs()).isEqualTo(2);
                    assertThat(endpoint.deadJobs("mail", "delete", null, null, java.util.List.of("d"), null, null)
                            .getBody().jobs()).isEqualTo(1);
                    assertThat(endpoint.deadJobs("mail", "replay", null, null, null, true, null).getBody().jobs())
                            .as("only a is still dead").isEqualTo(1);
                    awaitDead(mail, deaths, 1, 1, runs, 6);

                    var jobs = context.getBean(ConsistencyKitDatabase.class).database().getCollection("jobs");
                    assertThat(jobs.find(new Document("_id", "b")).first().getString("state")).isEqualTo("discarded");
                    assertThat(jobs.find(new Document("_id", "c")).first().getString("state")).isEqualTo("discarded");
                    Document d = jobs.find(new Document("_id", "d")).first();
                    assertThat(d == null || d.containsKey("compactedAt")).isTrue();
                    assertThat(runs.get()).as("discarded and deleted jobs never ran again").isEqualTo(6);
                });
    }

    /**
     * Waits for {@code died} more jobs to die (the listener's {@code onDead}, called once the job is stored dead), then
     * checks that {@code dead} jobs are dead after {@code expectedRuns} runs in all.
     */
    private static void awaitDead(JobQueue queue, java.util.concurrent.Semaphore deaths, int died, long dead,
                                  java.util.concurrent.atomic.AtomicInteger runs, int expectedRuns)
            throws InterruptedException {
        assertThat(deaths.tryAcquire(died, 2, java.util.concurrent.TimeUnit.MINUTES))
                .as("%d more jobs died", died).isTrue();
        assertThat(runs.get()).isEqualTo(expectedRuns);
        assertThat(queue.status().count("dead")).isEqualTo(dead);
    }

    @Test
    void shouldOfferTheDatabaseAsAMongoDatabaseBean() {
        TestContexts.runner(database).run(context -> assertThat(context.getBean(com.mongodb.client.MongoDatabase.class)
                .getName()).isEqualTo(database));
    }

    @Test
    void shouldFailToStartNamingTheHostAndThePropertyWhenNoServerAnswers() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(ConsistencyKitAutoConfiguration.class))
                .withBean(MongoClient.class, () -> MongoClients.create(MongoClientSettings.builder()
                        .applyConnectionString(new com.mongodb.ConnectionString("mongodb://127.0.0.1:9"))
                        .applyToClusterSettings(c -> c.serverSelectionTimeout(300, java.util.concurrent.TimeUnit
                                .MILLISECONDS)).build()))
                .withPropertyValues("consistency-kit.database=" + database,
                        "consistency-kit.two-phase.payments.operation-timeout=1s")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().isNotNull();
                    Throwable failure = context.getStartupFailure();
                    while (failure.getCause() != null && !failure.getMessage().contains("could not reach")) {
                        failure = failure.getCause();
                    }
                    assertThat(failure.getMessage()).contains("could not reach MongoDB at [127.0.0.1:9]")
                            .contains("spring.mongodb.uri").contains("consistency-kit.embedded.enabled=true");
                });
    }
}
