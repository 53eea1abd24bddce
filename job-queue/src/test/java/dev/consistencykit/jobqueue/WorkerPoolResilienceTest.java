package dev.consistencykit.jobqueue;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.embedded.EmbeddedMongo;
import dev.consistencykit.testkit.FaultyNetwork;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * A worker pool never dies silently: whatever a claim, a handler, a heartbeat or the server throws at it, it reports
 * it, backs off and goes on (or replaces a thread that died), and its shutdown returns in bounded time without
 * throwing, saying what it left leased.
 */
@ExtendWith(MongoTestExtension.class)
class WorkerPoolResilienceTest {

    private static final long WAIT_SECONDS = 60;   // a bound for a latch, never a speed the test depends on

    /** Records what the pool reports, and counts down on each report. */
    private static final class Reports implements JobQueueListener {
        final List<String> errors = new CopyOnWriteArrayList<>();
        final List<String> deaths = new CopyOnWriteArrayList<>();
        final CountDownLatch anError = new CountDownLatch(1);
        final CountDownLatch aDeath = new CountDownLatch(1);

        @Override
        public void onWorkerError(String worker, Exception error) {
            errors.add(error.getClass().getName());
            anError.countDown();
        }

        @Override
        public void onWorkerDied(String worker, Throwable error) {
            deaths.add(error.toString());
            aDeath.countDown();
        }
    }

    private static MongoClient fastClient(String uri) {
        return MongoClients.create(MongoClientSettings.builder().applyConnectionString(new ConnectionString(uri))
                .applyToClusterSettings(c -> c.serverSelectionTimeout(1, TimeUnit.SECONDS))
                .applyToSocketSettings(s -> s.connectTimeout(1, TimeUnit.SECONDS))
                .applyToServerSettings(s -> s.minHeartbeatFrequency(20, TimeUnit.MILLISECONDS)
                        .heartbeatFrequency(200, TimeUnit.MILLISECONDS)).build());
    }

    @Test
    void shouldRefuseVirtualThreadsTypedBeforeJava21AndStartNothing(MongoDatabase db) {
        assumeFalse(WorkerThreads.virtualAvailable(), "this runtime has virtual threads");
        JobQueue queue = JobQueue.builder(db).handler("none", ctx -> { }).build();
        assertThatThrownBy(() -> queue.startWorkers(2, WorkerThreads.VIRTUAL))
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("Java 21");
    }

    @ParameterizedTest
    @EnumSource(WorkerThreads.class)
    void shouldReplaceAThreadKilledByAnErrorFromAHandlerAndRunItsJobAgain(WorkerThreads threads, MongoDatabase db) throws Exception {
        assumeTrue(threads == WorkerThreads.PLATFORM || WorkerThreads.virtualAvailable(), "virtual threads: Java 21+");
        AtomicInteger boom = new AtomicInteger();
        CountDownLatch allDone = new CountDownLatch(4);
        Reports reports = new Reports();
        JobQueue queue = JobQueue.builder(db).listener(reports)
                .retryBackoff(Duration.ofMillis(1), Duration.ofMillis(5))
                .handler("boom", ctx -> {
                    if (boom.incrementAndGet() == 1) {
                        throw new AssertionError("a handler's own bug");
                    }
                    allDone.countDown();
                })
                .handler("fine", ctx -> allDone.countDown()).build();
        queue.enqueue(JobRequest.of("boom", new Document()).withId(OperationId.of("boom")).withPriority(10));
        for (int i = 0; i < 3; i++) {
            queue.enqueue(JobRequest.of("fine", new Document()));
        }

        JobWorkers workers = queue.startWorkers(1, threads);
        try {
            assertThat(allDone.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("every job ran").isTrue();
            assertThat(reports.aDeath.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
        } finally {
            JobWorkers.ShutdownReport report = workers.stop(Duration.ofSeconds(5));
            assertThat(report.leftLeased()).isEmpty();
        }

        assertThat(reports.deaths).hasSize(1).allMatch(d -> d.contains("a handler's own bug"));
        assertThat(workers.health().threadDeaths()).isEqualTo(1);
        assertThat(boom.get()).isEqualTo(2);
        Document job = db.getCollection("jobs").find(eq("_id", "boom")).first();
        assertThat(job.getString("state")).isEqualTo(JobState.DONE.stored());
        assertThat(job.getInteger("attempts")).as("the attempt that killed its worker counts").isEqualTo(2);
    }

    @ParameterizedTest
    @EnumSource(WorkerThreads.class)
    void shouldCountAnAttemptThatKilledItsWorkerAndRunTheHealthyJobsBehindIt(WorkerThreads threads, MongoDatabase db) throws Exception {
        assumeTrue(threads == WorkerThreads.PLATFORM || WorkerThreads.virtualAvailable(), "virtual threads: Java 21+");
        CountDownLatch healthy = new CountDownLatch(3);
        CountDownLatch buried = new CountDownLatch(1);
        JobQueue queue = JobQueue.builder(db).maxAttempts(3).retryBackoff(Duration.ofMillis(1), Duration.ofMillis(5))
                .listener(new JobQueueListener() {
                    @Override
                    public void onDead(OperationId id, String type, String error, Throwable thrown) {
                        buried.countDown();
                    }
                })
                .handler("boom", ctx -> {
                    throw new StackOverflowError("always");
                })
                .handler("fine", ctx -> healthy.countDown()).build();
        queue.enqueue(JobRequest.of("boom", new Document()).withId(OperationId.of("boom")).withPriority(10));
        for (int i = 0; i < 3; i++) {
            queue.enqueue(JobRequest.of("fine", new Document()));
        }

        JobWorkers workers = queue.startWorkers(1, threads);
        try {
            assertThat(healthy.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the healthy jobs ran").isTrue();
            assertThat(buried.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the poisoned job died").isTrue();
        } finally {
            workers.stop(Duration.ofSeconds(5));
        }

        Document job = db.getCollection("jobs").find(eq("_id", "boom")).first();
        assertThat(job.getString("state")).isEqualTo(JobState.DEAD.stored());
        assertThat(job.getInteger("attempts")).isEqualTo(3);
        assertThat(job.getString("lastError")).contains("StackOverflowError: always");
        assertThat(workers.health().threadDeaths()).isEqualTo(3);
    }

    @ParameterizedTest
    @EnumSource(WorkerThreads.class)
    void shouldKeepRunningAndReportWhenEveryClaimFailsWithANonMongoException(WorkerThreads threads, MongoDatabase db) throws Exception {
        assumeTrue(threads == WorkerThreads.PLATFORM || WorkerThreads.virtualAvailable(), "virtual threads: Java 21+");
        Reports reports = new Reports();
        MongoClient client = fastClient(MongoTarget.fromEnvironment().connectionString().getConnectionString());
        JobQueue queue = JobQueue.builder(client.getDatabase(db.getName())).listener(reports)
                .handler("fine", ctx -> { }).build();
        queue.enqueue(JobRequest.of("fine", new Document()));
        JobWorkers workers = queue.startWorkers(2, threads);
        // a closed client: every call now fails with the driver's IllegalStateException ("state should be: open")
        client.close();

        assertThat(reports.anError.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
        JobWorkers.Health health = workers.health();
        assertThat(health.alive()).isEqualTo(2);
        assertThat(health.errors()).isPositive();
        assertThat(reports.errors).allMatch(e -> e.startsWith("dev.consistencykit.core."));
        JobWorkers.ShutdownReport report = workers.stop(Duration.ofMillis(200));
        assertThat(report.stillAlive()).isZero();
    }

    @ParameterizedTest
    @EnumSource(WorkerThreads.class)
    void shouldShutDownInBoundedTimeWithoutThrowingWhenTheServerIsGone(WorkerThreads threads) throws Exception {
        assumeTrue(threads == WorkerThreads.PLATFORM || WorkerThreads.virtualAvailable(), "virtual threads: Java 21+");
        EmbeddedMongo server = EmbeddedMongo.start();
        Reports reports = new Reports();
        MongoClient client = fastClient(server.connectionString());
        JobQueue queue = JobQueue.builder(client.getDatabase("gone")).listener(reports)
                .operationTimeout(Duration.ofSeconds(1)).handler("fine", ctx -> { }).build();
        JobWorkers workers = queue.startWorkers(2, threads);
        server.close();

        assertThat(reports.anError.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
        assertThat(workers.health().alive()).isEqualTo(2);
        // grace plus one operation timeout, with room for a loaded machine
        JobWorkers.ShutdownReport report = CompletableFuture.supplyAsync(() -> workers.stop(Duration.ofMillis(500)))
                .get(500 + 1_000 + 10_000, TimeUnit.MILLISECONDS);

        assertThat(report.leftLeased()).isEmpty();
        client.close();
    }

    @ParameterizedTest
    @EnumSource(WorkerThreads.class)
    void shouldShutDownInBoundedTimeAndReportTheJobItLeftWhenTheServerHangs(WorkerThreads threads, MongoDatabase db) throws Exception {
        assumeTrue(threads == WorkerThreads.PLATFORM || WorkerThreads.virtualAvailable(), "virtual threads: Java 21+");
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        try (FaultyNetwork network = FaultyNetwork.inFrontOf(MongoTarget.fromEnvironment());
             MongoClient client = fastClient(network.connectionString())) {
            JobQueue queue = JobQueue.builder(client.getDatabase(db.getName())).operationTimeout(Duration.ofSeconds(1))
                    .handler("slow", ctx -> {
                        running.countDown();
                        finish.await(WAIT_SECONDS, TimeUnit.SECONDS);
                    }).build();
            queue.enqueue(JobRequest.of("slow", new Document()).withId(OperationId.of("slow")));
            JobWorkers workers = queue.startWorkers(1, threads);
            assertThat(running.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
            network.hang();

            // grace plus one operation timeout, with room for a loaded machine
            JobWorkers.ShutdownReport report = CompletableFuture.supplyAsync(
                    () -> workers.stop(Duration.ofMillis(200))).get(200 + 1_000 + 10_000, TimeUnit.MILLISECONDS);
            finish.countDown();
            network.heal();

            assertThat(report.clean()).isFalse();
            assertThat(report.leftLeased()).containsExactly(OperationId.of("slow"));
            assertThat(report.givenBack()).isEmpty();
        }
    }
}
