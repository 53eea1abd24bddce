package dev.consistencykit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;

import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;

/**
 * Health per instance and the {@code consistencykit} endpoint: up while nothing stands interrupted, down with the
 * interrupted operation in the details when one does, and recovery through the endpoint's write operation.
 */
class ConsistencyKitActuatorTest {

    private String database;

    private ApplicationContextRunner runner() {
        // maintenance off: the test decides when recovery runs
        return TestContexts.runner(database)
                .withPropertyValues("consistency-kit.maintenance.enabled=false",
                        "consistency-kit.health.interrupted-after=0s",
                        "consistency-kit.two-phase.payments.stale-after=0s");
    }

    @BeforeEach
    void name() {
        database = MongoTarget.freshDatabaseName("actuator");
    }

    @AfterEach
    void drop() {
        MongoTarget.fromEnvironment().client().getDatabase(database).drop();
    }

    private static Health health(CompositeHealthContributor composite, String name) {
        return ((HealthIndicator) composite.getContributor(name)).health();
    }

    @Test
    void shouldListAnInterruptedTransferUnderAttentionStayingUpThenRecoverItThroughTheEndpoint() {
        runner().run(context -> {
            MongoDatabase db = context.getBean(ConsistencyKitDatabase.class).database();
            db.getCollection("accounts").insertMany(java.util.List.of(
                    new Document("_id", "alice").append("balance", 100L),
                    new Document("_id", "bob").append("balance", 0L)));
            CompositeHealthContributor health = context.getBean("consistencyKitHealthContributor",
                    CompositeHealthContributor.class);
            assertThat(health(health, "payments").getStatus()).isEqualTo(Status.UP);

            // a transfer recorded for a worker and never run: it stands interrupted
            TwoPhaseCommit payments = context.getBean("payments", TwoPhaseCommit.class);
            payments.submitTransfer(Transfer.of(OperationId.of("t1"), "alice", "bob", 30));
            Health attention = health(health, "payments");
            assertThat(attention.getStatus()).as("work for an operator, not a reason to restart").isEqualTo(Status.UP);
            assertThat(attention.getDetails().get("interrupted").toString()).contains("t1");
            assertThat(attention.getDetails().get("attention").toString()).contains("1 operations interrupted");

            ConsistencyKitEndpoint endpoint = context.getBean(ConsistencyKitEndpoint.class);
            Map<String, ConsistencyKitEndpoint.InstanceView> views = endpoint.instances();
            assertThat(views).containsOnlyKeys("payments");
            assertThat(views.get("payments").interrupted()).extracting(ConsistencyKitEndpoint.InterruptedView::id)
                    .containsExactly("t1");
            ConsistencyKitEndpoint.RecoveryView recovered = endpoint.recover("payments").getBody();
            assertThat(recovered.examined()).isEqualTo(1);

            assertThat(health(health, "payments").getDetails()).doesNotContainKey("attention");
            assertThat(endpoint.instance("payments").getBody().interrupted()).isEmpty();
            assertThat(endpoint.instance("nothing").getStatus()).isEqualTo(404);
            assertThat(endpoint.recover("nothing").getStatus()).isEqualTo(404);
            assertThat(endpoint.deadJobs("payments", "replay", null, null, null, true, null).getStatus())
                    .as("not a job queue").isEqualTo(404);
        });
    }

    @Test
    void shouldGoDownAtTheThresholdsAnOperatorSets() {
        runner().withPropertyValues("consistency-kit.health.interrupted-down-at=1").run(context -> {
            context.getBean(ConsistencyKitDatabase.class).database().getCollection("accounts").insertOne(
                    new Document("_id", "alice").append("balance", 100L));
            context.getBean("payments", TwoPhaseCommit.class).submitTransfer(Transfer.of(OperationId.of("t1"),
                    "alice", "bob", 1));
            Health down = health(context.getBean("consistencyKitHealthContributor", CompositeHealthContributor.class),
                    "payments");
            assertThat(down.getStatus()).isEqualTo(Status.DOWN);
            assertThat(down.getDetails().get("down").toString()).contains("interrupted-down-at");
        });
    }

    @Test
    void shouldLeaveTheIndicatorOutWhenBootsPropertySwitchesItOff() {
        runner().withPropertyValues("management.health.consistency-kit.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean("consistencyKitHealthContributor"));
    }

    @Test
    void shouldGiveWayToTheApplicationsOwnHealthContributor() {
        CompositeHealthContributor mine = CompositeHealthContributor.fromMap(
                Map.<String, HealthIndicator>of("x", () -> Health.up().build()));
        runner().withBean("consistencyKitHealthContributor", CompositeHealthContributor.class, () -> mine)
                .run(context -> assertThat(context.getBean("consistencyKitHealthContributor")).isSameAs(mine));
    }

    @Test
    void shouldNotWaitForTheThresholdBelowIt() {
        runner().withPropertyValues("consistency-kit.health.interrupted-after=1h").run(context -> {
            context.getBean(ConsistencyKitDatabase.class).database().getCollection("accounts").insertOne(
                    new Document("_id", "alice").append("balance", 100L));
            TwoPhaseCommit payments = context.getBean("payments", TwoPhaseCommit.class);
            payments.submitTransfer(Transfer.of(OperationId.of("t2"), "alice", "alice2", 1));
            Health health = health(context.getBean("consistencyKitHealthContributor",
                    CompositeHealthContributor.class), "payments");
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).containsEntry("inFlight", 1L);
            assertThat(Duration.parse(health.getDetails().get("oldestInFlight").toString()).isNegative()).isFalse();
        });
    }

    @Test
    void shouldStayUpWithADeadJobInTheDetailsAndGoDownWhileAnIndexItsSafetyRestsOnIsGone() {
        runner().withPropertyValues("consistency-kit.job-queue.mail.max-attempts=1")
                .withBean("fail", dev.consistencykit.jobqueue.JobHandler.class, () -> ctx -> {
                    throw new IllegalStateException("smtp refused");
                })
                .run(context -> {
                    CompositeHealthContributor health = context.getBean("consistencyKitHealthContributor",
                            CompositeHealthContributor.class);
                    dev.consistencykit.jobqueue.JobQueue mail = context.getBean("mail",
                            dev.consistencykit.jobqueue.JobQueue.class);
                    assertThat(health(health, "mail").getStatus()).isEqualTo(Status.UP);

                    mail.apply(dev.consistencykit.jobqueue.JobRequest.of("fail", new Document())
                            .withId(OperationId.of("j1")));
                    Health dead = health(health, "mail");
                    assertThat(dead.getStatus()).isEqualTo(Status.UP);
                    assertThat(dead.getDetails()).containsEntry("deadJobs", 1L);
                    assertThat(dead.getDetails().get("dead").toString()).contains("j1").contains("smtp refused");
                    assertThat(dead.getDetails().get("attention").toString()).contains("1 dead job waiting");
                    ConsistencyKitEndpoint endpoint = context.getBean(ConsistencyKitEndpoint.class);
                    assertThat(endpoint.deadJobs("mail", "replay", null, null, null, null, null).getStatus())
                            .as("no selection").isEqualTo(400);
                    assertThat(endpoint.deadJobs("mail", "burn", null, null, null, true, null).getStatus())
                            .isEqualTo(400);
                    assertThat(endpoint.deadJobs("nope", "replay", null, null, null, true, null).getStatus())
                            .isEqualTo(404);
                    assertThat(endpoint.deadJobs("mail", "discard", "fail", "smtp", null, null, null).getBody().jobs())
                            .isEqualTo(1);
                    // the actions on live jobs, by ids
                    mail.enqueue(dev.consistencykit.jobqueue.JobRequest.of("fail", new Document())
                            .withId(OperationId.of("later")).delayedBy(Duration.ofHours(1)));
                    assertThat(endpoint.deadJobs("mail", "reschedule", null, null, "later", null, "soon").getStatus())
                            .as("no instant").isEqualTo(400);
                    assertThat(endpoint.deadJobs("mail", "reschedule", null, null, "later", null,
                            "2099-01-01T00:00:00Z").getBody().jobs()).isEqualTo(1);
                    assertThat(endpoint.deadJobs("mail", "cancel", null, null, null, true, null).getStatus())
                            .as("by ids only").isEqualTo(400);
                    assertThat(endpoint.deadJobs("mail", "cancel", null, null, "later", null, null).getBody().jobs())
                            .isEqualTo(1);
                    var again = endpoint.deadJobs("mail", "cancel", null, null, "later", null, null);
                    assertThat(again.getStatus()).isEqualTo(404);
                    assertThat(again.getBody().idsNotFound()).containsExactly("later");
                    assertThat(endpoint.deadJobs("mail", "rerun", null, null, "j1", null, null).getBody().selection())
                            .startsWith("j1/rerun/");
                    assertThat(health(health, "mail").getDetails()).doesNotContainKey("deadJobs");
                    context.getBean(ConsistencyKitDatabase.class).database().getCollection("jobs")
                            .deleteMany(new Document());
                    assertThat(health(health, "mail").getStatus()).isEqualTo(Status.UP);

                    // an operator drops the unique index the queue's dedupe keys rest on
                    context.getBean(ConsistencyKitDatabase.class).database().getCollection("jobs").dropIndex("dedupe");
                    Health broken = health(health, "mail");
                    assertThat(broken.getStatus()).isEqualTo(Status.DOWN);
                    assertThat(broken.getDetails().get("setup").toString()).contains("dedupe");
                    mail.ensureIndexes();
                    assertThat(health(health, "mail").getStatus()).isEqualTo(Status.UP);
                });
    }
}
