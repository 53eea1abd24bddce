package dev.consistencykit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.Maintenance;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.jobqueue.JobQueueListener;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.logreconciliation.Change;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerListener;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.micrometer.ConsistencyKitMeters;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncFlagListener;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.twophase.TwoPhaseListener;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.VersionedStoreListener;
import dev.consistencykit.versioning.VersionedStore;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/** After a short workload of each pattern, a registry shows each pattern's counters and events by instance. */
@ExtendWith(MongoTestExtension.class)
class MicrometerBindingTest {

    @Test
    void shouldShowEveryPatternsMetersAfterAShortWorkload(MongoDatabase db) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        db.getCollection("accounts").insertMany(List.of(new Document("_id", "a").append("balance", 100L),
                new Document("_id", "b").append("balance", 100L)));
        db.getCollection("users").insertOne(new Document("_id", "u1").append("name", "Ann"));
        db.getCollection("comments").insertOne(new Document("_id", "c1").append("authorId", "u1")
                .append("authorName", "Ann"));

        TwoPhaseCommit payments = TwoPhaseCommit.builder(db).name("payments")
                .listener(ConsistencyKitMeters.listener(TwoPhaseListener.class, registry, "payments")).build();
        JobQueue jobs = JobQueue.builder(db).name("mail")
                .listener(ConsistencyKitMeters.listener(JobQueueListener.class, registry, "mail"))
                .handler("send", ctx -> ctx.applyOnce("accounts", "a", Updates.inc("mails", 1))).build();
        Ledger ledger = Ledger.builder(db).name("ledger")
                .listener(ConsistencyKitMeters.listener(LedgerListener.class, registry, "ledger")).build();
        VersionedStore catalogue = VersionedStore.builder(db).name("catalogue")
                .listener(ConsistencyKitMeters.listener(VersionedStoreListener.class, registry, "catalogue")).build();
        SyncFlag profiles = SyncFlag.builder(db).name("profiles").master("users", "name")
                .target(SyncTarget.in("comments", "authorId").copy("name", "authorName"))
                .listener(ConsistencyKitMeters.listener(SyncFlagListener.class, registry, "profiles")).build();
        for (var strategy : List.of(payments, jobs, ledger, catalogue, profiles)) {
            strategy.ensureIndexes();
            ConsistencyKitMeters.bind(registry, strategy);
        }
        Maintenance maintenance = Maintenance.builder().strategy(payments).strategy(jobs).build();
        ConsistencyKitMeters.bind(registry, maintenance);

        payments.transfer(Transfer.of(OperationId.of("t1"), "a", "b", 5));
        jobs.apply(JobRequest.of("send", new Document()));
        ledger.apply(LedgerTransaction.of(Change.credit("x", 5)));
        catalogue.createRoot("cat");
        catalogue.commit(ChangeSet.on("cat", 0).put("i", new Document("v", 1)).build());
        profiles.update("u1", Updates.set("name", "Annie"));
        maintenance.runOnce();

        assertThat(registry.get("consistencykit.committed").tag("instance", "payments").functionCounter().count())
                .isEqualTo(1.0);
        assertThat(registry.get("consistencykit.done").tag("instance", "mail").functionCounter().count())
                .isEqualTo(1.0);
        assertThat(registry.get("consistencykit.appended").tag("instance", "ledger").functionCounter().count())
                .isEqualTo(1.0);
        assertThat(registry.get("consistencykit.committed").tag("instance", "catalogue").functionCounter().count())
                .isEqualTo(1.0);
        assertThat(registry.get("consistencykit.updates").tag("instance", "profiles").functionCounter().count())
                .isEqualTo(1.0);
        for (String instance : List.of("payments", "mail", "ledger", "catalogue", "profiles")) {
            assertThat(registry.find("consistencykit.events").tag("instance", instance).counters())
                    .as(instance + " events").isNotEmpty();
        }
        assertThat(registry.get("consistencykit.events").tag("instance", "mail").tag("event", "onDone")
                .tag("type", "send").counter().count()).as("job outcomes per type").isEqualTo(1.0);
        assertThat(registry.get("consistencykit.maintenance.failures").tag("step", "payments recover").gauge()
                .value()).isZero();
        assertThat(registry.get("consistencykit.maintenance.lag").tag("step", "mail prune").gauge().value())
                .isZero();
    }
}
