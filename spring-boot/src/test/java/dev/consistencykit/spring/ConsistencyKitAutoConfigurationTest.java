package dev.consistencykit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextClosedEvent;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.spi.DriverFloor;
import dev.consistencykit.core.spi.PatternRegistry;
import dev.consistencykit.jobqueue.JobHandler;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.versioning.Retention;
import dev.consistencykit.versioning.VersionedStore;

/**
 * The auto-configuration in an application context: instances from properties, the application's own beans winning,
 * indexes on start, and job workers that start and stop with the context.
 */
class ConsistencyKitAutoConfigurationTest {

    private String database;

    private ApplicationContextRunner runner() {
        return TestContexts.runner(database);
    }

    @BeforeEach
    void name() {
        database = MongoTarget.freshDatabaseName("spring");
    }

    @AfterEach
    void drop() {
        MongoTarget.fromEnvironment().client().getDatabase(database).drop();
    }

    @Test
    void shouldMakeOneBeanPerInstanceThePropertiesDeclare() {
        runner().withPropertyValues(
                "consistency-kit.two-phase.payments.lease=7s",
                "consistency-kit.two-phase.payments.accounts-collection=wallets",
                "consistency-kit.two-phase.refunds.name=refunds-eu",
                "consistency-kit.job-queue.jobs.collection=work",
                "consistency-kit.job-queue.jobs.max-attempts=3",
                "consistency-kit.job-queue.jobs.operation-timeout=9s",
                "consistency-kit.ledger.books.overdraft-floor=0",
                "consistency-kit.versioning.catalogue.keep-last=4",
                "consistency-kit.sync-flag.users.master-collection=users",
                "consistency-kit.sync-flag.users.master-fields=name",
                "consistency-kit.sync-flag.users.targets[0].collection=comments",
                "consistency-kit.sync-flag.users.targets[0].id-field=authorId",
                "consistency-kit.sync-flag.users.targets[0].copies.name=authorName")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBeansOfType(TwoPhaseCommit.class)).containsOnlyKeys("payments", "refunds");
                    TwoPhaseCommit payments = context.getBean("payments", TwoPhaseCommit.class);
                    assertThat(payments.name()).isEqualTo("payments");
                    assertThat(payments.config().lease()).isEqualTo(Duration.ofSeconds(7));
                    assertThat(payments.config().accountsCollection()).isEqualTo("wallets");
                    assertThat(context.getBean("refunds", TwoPhaseCommit.class).name()).isEqualTo("refunds-eu");
                    JobQueue jobs = context.getBean(JobQueue.class);
                    assertThat(jobs.config().collection()).isEqualTo("work");
                    assertThat(jobs.config().maxAttempts()).isEqualTo(3);
                    assertThat(jobs.config().operationTimeout()).isEqualTo(Duration.ofSeconds(9));
                    assertThat(context.getBean(Ledger.class).config().overdraftFloor()).hasValue(0);
                    assertThat(context.getBean(VersionedStore.class).config().retention())
                            .isEqualTo(Retention.keepLast(4));
                    assertThat(context.getBean(SyncFlag.class).config().targets()).hasSize(1);
                    // ensureIndexes on start registered every instance for the operators' tools
                    assertThat(PatternRegistry.registered(context.getBean(ConsistencyKitDatabase.class).database()))
                            .extracting(PatternRegistry.Registration::name)
                            .contains("payments", "refunds-eu", "jobs", "books", "catalogue");
                });
    }

    @Test
    void shouldGiveWayToTheApplicationsOwnBeans() {
        runner().withPropertyValues("consistency-kit.two-phase.payments.lease=7s")
                .withBean("payments", TwoPhaseCommit.class, () -> TwoPhaseCommit.builder(
                        MongoTarget.fromEnvironment().client().getDatabase(database)).name("mine").build())
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean("payments", TwoPhaseCommit.class).name()).isEqualTo("mine");
                });
        runner().withBean(ConsistencyKitDatabase.class, () -> new ConsistencyKitDatabase(
                        MongoTarget.fromEnvironment().client().getDatabase(database + "x")))
                .withPropertyValues("consistency-kit.ledger.books.name=books")
                .run(context -> assertThat(context.getBean(ConsistencyKitDatabase.class).database().getName())
                        .isEqualTo(database + "x"));
        MongoTarget.fromEnvironment().client().getDatabase(database + "x").drop();
    }

    @Test
    void shouldCreateNoIndexesWhenSwitchedOffAndStillStart() {
        runner().withPropertyValues("consistency-kit.ensure-indexes=false", "consistency-kit.ledger.books.name=b")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(PatternRegistry.registered(context.getBean(ConsistencyKitDatabase.class).database()))
                            .isEmpty();
                });
    }

    /**
     * Handler beans run the jobs on the workers the properties start; closing the context stops the workers, which
     * first finish the jobs they run (stop joins their threads).
     */
    @Test
    void shouldRunJobsWithHandlerBeansAndStopTheWorkersWithTheContext() throws Exception {
        CountDownLatch ran = new CountDownLatch(5);
        runner().withPropertyValues("consistency-kit.job-queue.jobs.workers=2")
                .withBean("count", JobHandler.class, () -> job -> {
                    job.applyOnce("counters", "c0", Updates.inc("n", 1));
                    ran.countDown();
                })
                .run(context -> {
                    var db = context.getBean(ConsistencyKitDatabase.class).database();
                    db.getCollection("counters").insertOne(new Document("_id", "c0").append("n", 0));
                    JobQueue.ensureEffectIndexes(db.getCollection("counters"));
                    JobQueue jobs = context.getBean(JobQueue.class);
                    for (int i = 0; i < 5; i++) {
                        jobs.enqueue(JobRequest.of("count", new Document()).withId(OperationId.of("j" + i)));
                    }
                    assertThat(ran.await(30, TimeUnit.SECONDS)).isTrue();
                    assertThat(context.getBean(ConsistencyKitLifecycle.class).isRunning()).isTrue();
                });
        // the context closed: the workers finished their jobs and their threads ended
        var db = MongoTarget.fromEnvironment().client().getDatabase(database);
        assertThat(db.getCollection("jobs").countDocuments(Filters.eq("state", "done"))).isEqualTo(5);
        assertThat(db.getCollection("counters").find(Filters.eq("_id", "c0")).first().getInteger("n")).isEqualTo(5);
        assertThat(workerThreadsAlive()).isFalse();
    }

    /** Counts down when the context starts to close, before its lifecycle beans stop. */
    private record ReleaseOnClose(CountDownLatch closing) implements ApplicationListener<ContextClosedEvent> {
        @Override
        public void onApplicationEvent(ContextClosedEvent event) {
            closing.countDown();
        }
    }

    private static boolean workerThreadsAlive() {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().startsWith("jobs-worker"));
    }

    /** A job running when the context closes finishes within the grace: the stop waits for it, then the client goes. */
    @Test
    void shouldLetAJobInFlightFinishWhenTheContextCloses() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch closing = new CountDownLatch(1);
        runner().withPropertyValues("consistency-kit.job-queue.jobs.workers=1",
                        "consistency-kit.job-queue.jobs.shutdown-grace=20s")
                .withBean(ReleaseOnClose.class, () -> new ReleaseOnClose(closing))
                .withBean("slow", JobHandler.class, () -> job -> {
                    started.countDown();
                    // still running when the context starts to close: it goes on only once the close has begun
                    assertThat(closing.await(30, TimeUnit.SECONDS)).isTrue();
                    job.applyOnce("counters", "c0", Updates.inc("n", 1));
                })
                .run(context -> {
                    var db = context.getBean(ConsistencyKitDatabase.class).database();
                    db.getCollection("counters").insertOne(new Document("_id", "c0").append("n", 0));
                    JobQueue.ensureEffectIndexes(db.getCollection("counters"));
                    context.getBean(JobQueue.class).enqueue(JobRequest.of("slow", new Document())
                            .withId(OperationId.of("in-flight")));
                    assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
                });
        var db = MongoTarget.fromEnvironment().client().getDatabase(database);
        assertThat(db.getCollection("jobs").find(Filters.eq("_id", "in-flight")).first().getString("state"))
                .isEqualTo("done");
        assertThat(db.getCollection("counters").find(Filters.eq("_id", "c0")).first().getInteger("n")).isEqualTo(1);
    }

    /** {@code worker-threads=virtual}: the workers run on virtual threads, or the start says why not (before 21). */
    @Test
    void shouldRunTheWorkersOnTheThreadsThePropertyNames() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicReference<Thread> on = new java.util.concurrent.atomic.AtomicReference<>();
        runner().withPropertyValues("consistency-kit.job-queue.jobs.workers=1",
                        "consistency-kit.job-queue.jobs.worker-threads=virtual")
                .withBean("mark", JobHandler.class, () -> job -> {
                    on.set(Thread.currentThread());
                    ran.countDown();
                })
                .run(context -> {
                    if (!dev.consistencykit.jobqueue.WorkerThreads.virtualAvailable()) {
                        assertThat(context).hasFailed();
                        assertThat(context.getStartupFailure()).hasStackTraceContaining("Java 21");
                        return;
                    }
                    context.getBean(JobQueue.class).enqueue(JobRequest.of("mark", new Document()));
                    assertThat(ran.await(30, TimeUnit.SECONDS)).isTrue();
                    assertThat(Thread.class.getMethod("isVirtual").invoke(on.get())).isEqualTo(true);
                });
    }

    /**
     * Every job queue registers every handler bean (docs/spring-boot.md): a job runs on the queue it was enqueued on,
     * with its type's handler, and a type no handler names is dead at its first claim.
     */
    @Test
    void shouldRunEachQueuesJobsWithTheHandlerOfTheirTypeOnThatQueueOnly() {
        java.util.List<String> ran = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        runner().withPropertyValues("consistency-kit.job-queue.mail.collection=mailJobs",
                        "consistency-kit.job-queue.billing.collection=billingJobs")
                .withBean("note", JobHandler.class, () -> job -> ran.add(job.payload().getString("on")))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    JobQueue mail = context.getBean("mail", JobQueue.class);
                    JobQueue billing = context.getBean("billing", JobQueue.class);
                    mail.enqueue(JobRequest.of("note", new Document("on", "mail")).withId(OperationId.of("m1")));
                    billing.enqueue(JobRequest.of("note", new Document("on", "billing"))
                            .withId(OperationId.of("b1")));
                    billing.enqueue(JobRequest.of("nobody", new Document()).withId(OperationId.of("b2")));

                    assertThat(mail.processNext()).isPresent();
                    assertThat(mail.processNext()).isEmpty();
                    assertThat(ran).containsExactly("mail");
                    assertThat(billing.processNext()).isPresent();
                    assertThat(billing.processNext()).isPresent();
                    assertThat(billing.processNext()).isEmpty();
                    assertThat(ran).containsExactly("mail", "billing");
                    var db = context.getBean(ConsistencyKitDatabase.class).database();
                    assertThat(db.getCollection("billingJobs").find(Filters.eq("_id", "b2")).first()
                            .getString("state")).isEqualTo("dead");
                    assertThat(db.getCollection("mailJobs").countDocuments()).isEqualTo(1);
                });
    }

    @Test
    void shouldBindEveryInstancesCountersToTheApplicationsMeterRegistry() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        runner().withBean(MeterRegistry.class, () -> registry)
                .withPropertyValues("consistency-kit.ledger.books.name=books",
                        "consistency-kit.job-queue.jobs.name=jobs")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(registry.getMeters()).extracting(m -> m.getId().getTag("instance"))
                            .contains("books", "jobs");
                    assertThat(registry.find("consistencykit.appended").tag("instance", "books").functionCounter())
                            .isNotNull();
                });
    }

    /** A job queue's jobs by type and state as gauges, read from its backlog when the registry is scraped. */
    @Test
    void shouldShowAJobQueuesJobsByTypeAndStateAsGauges() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        reportJobs(registry).run(context -> {
            JobQueue queue = context.getBean(JobQueue.class);
            queue.enqueue(JobRequest.of("report", new Document()));
            queue.enqueue(JobRequest.of("report", new Document()).delayedBy(Duration.ofHours(1)));
            queue.enqueue(JobRequest.of("report", new Document()).withOrderingKey("k"));
            queue.enqueue(JobRequest.of("report", new Document()).withOrderingKey("k"));
            java.util.function.Function<String, Double> jobs = state -> registry.find("consistencykit.jobs")
                    .tag("type", "report").tag("state", state).gauge().value();
            assertThat(jobs.apply("waiting")).isEqualTo(2.0);
            assertThat(jobs.apply("scheduled")).isEqualTo(1.0);
            assertThat(jobs.apply("awaiting")).isEqualTo(1.0);
            assertThat(jobs.apply("running")).isZero();
            assertThat(jobs.apply("dead")).isZero();
            assertThat(registry.find("consistencykit.jobs.oldest.waiting").tag("type", "report").gauge())
                    .isNotNull();
        });
    }

    /**
     * The gauges outlive a garbage collection: a registry holds a gauge's object only weakly, so whatever the gauges
     * read through must be held by something the application keeps (the queue), not only by the registry.
     */
    @Test
    void shouldKeepShowingAJobQueuesGaugesAfterAFullGarbageCollection() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        reportJobs(registry).run(context -> {
            context.getBean(JobQueue.class).enqueue(JobRequest.of("report", new Document())
                    .delayedBy(Duration.ofHours(1)));
            collectGarbage();
            assertThat(registry.find("consistencykit.jobs").tag("type", "report").tag("state", "scheduled")
                    .gauge().value()).isEqualTo(1.0);
            assertThat(registry.find("consistencykit.jobs.oldest.waiting").tag("type", "report").gauge()
                    .value()).isZero();
            assertThat(registry.find("consistencykit.enqueued").tag("instance", "jobs").functionCounter()
                    .count()).isEqualTo(1.0);
        });
    }

    /** A context with a job queue named jobs, a handler of "report" jobs, and {@code registry}. */
    private ApplicationContextRunner reportJobs(SimpleMeterRegistry registry) {
        return runner().withBean(MeterRegistry.class, () -> registry)
                .withPropertyValues("consistency-kit.job-queue.jobs.name=jobs")
                .withBean("report", JobHandler.class, () -> job -> { });
    }

    /** Runs the collector until an object nothing holds is gone (a full collection, whatever the collector). */
    private static void collectGarbage() {
        java.lang.ref.WeakReference<Object> gone = new java.lang.ref.WeakReference<>(new Object());
        for (int i = 0; i < 20 && gone.get() != null; i++) {
            System.gc();
        }
        assertThat(gone.get()).as("a garbage collection ran").isNull();
    }

    /**
     * This module's tests run on the driver Spring Boot 4.0.7 manages (its pom takes that version, as an application on
     * Boot's dependency management does), which is above the library's floor: the starter needs no driver of its own.
     */
    @Test
    void shouldRunOnTheDriverSpringBootManages() {
        assertThat(DriverFloor.found()).isEqualTo("5.6.5");
        DriverFloor.require("spring-boot");
    }

    /**
     * With the application's observation registry, every public call of every instance is one observation with the
     * tags pattern, instance, operation and outcome; a job's run is one, on the worker's thread.
     */
    @Test
    void shouldObserveEveryOperationInTheApplicationsObservationRegistry() throws Exception {
        java.util.List<io.micrometer.observation.Observation.Context> stopped =
                new java.util.concurrent.CopyOnWriteArrayList<>();
        io.micrometer.observation.ObservationRegistry observations = io.micrometer.observation.ObservationRegistry
                .create();
        observations.observationConfig().observationHandler(new io.micrometer.observation.ObservationHandler<>() {
            @Override
            public boolean supportsContext(io.micrometer.observation.Observation.Context context) {
                return true;
            }

            @Override
            public void onStop(io.micrometer.observation.Observation.Context context) {
                stopped.add(context);
            }
        });
        CountDownLatch ran = new CountDownLatch(1);
        runner().withBean(io.micrometer.observation.ObservationRegistry.class, () -> observations)
                .withBean("count", JobHandler.class, () -> ctx -> ran.countDown())
                .withPropertyValues("consistency-kit.maintenance.enabled=false",
                        "consistency-kit.two-phase.payments.lease=10s",
                        "consistency-kit.job-queue.jobs.workers=1")
                .run(context -> {
                    com.mongodb.client.MongoDatabase db = context.getBean(ConsistencyKitDatabase.class).database();
                    db.getCollection("accounts").insertMany(java.util.List.of(
                            new Document("_id", "alice").append("balance", 100L),
                            new Document("_id", "bob").append("balance", 0L)));
                    stopped.clear();   // start-up's index creation is observed too
                    context.getBean("payments", TwoPhaseCommit.class).transfer(
                            dev.consistencykit.twophase.Transfer.of(OperationId.of("t1"), "alice", "bob", 30));
                    context.getBean("jobs", JobQueue.class).enqueue(JobRequest.of("count", new Document()));
                    assertThat(ran.await(30, TimeUnit.SECONDS)).isTrue();
                });

        java.util.List<java.util.Map<String, String>> seen = stopped.stream().map(c -> {
            java.util.Map<String, String> keys = new java.util.TreeMap<>();
            c.getLowCardinalityKeyValues().forEach(kv -> keys.put(kv.getKey(), kv.getValue()));
            return keys;
        }).filter(k -> !k.get("operation").equals("claim")).toList();
        assertThat(seen).contains(
                java.util.Map.of("pattern", "two-phase", "instance", "payments", "operation", "transfer",
                        "outcome", "committed"),
                java.util.Map.of("pattern", "job-queue", "instance", "jobs", "operation", "enqueue",
                        "outcome", "success"),
                java.util.Map.of("pattern", "job-queue", "instance", "jobs", "operation", "run job",
                        "outcome", "committed"));
        assertThat(seen.stream().filter(k -> k.get("operation").equals("transfer"))).as("one per operation")
                .hasSize(1);
    }
}
