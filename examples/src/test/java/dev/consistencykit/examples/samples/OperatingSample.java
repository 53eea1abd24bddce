package dev.consistencykit.examples.samples;

import java.time.Duration;

import org.bson.Document;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import dev.consistencykit.core.Maintenance;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.micrometer.ConsistencyKitMeters;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.twophase.TwoPhaseListener;

/** The README's two operating samples: the maintenance runner, then metrics for what runs. */
public final class OperatingSample {

    private OperatingSample() {
    }

    /** Runs both samples on {@code db}; returns the registry the second filled. */
    public static MeterRegistry run(MongoDatabase db) {
        // README:start maintenance
        MeterRegistry registry = new SimpleMeterRegistry();          // your application's registry
        TwoPhaseCommit payments = TwoPhaseCommit.builder(db).name("payments")
                .listener(ConsistencyKitMeters.listener(TwoPhaseListener.class, registry, "payments")).build();
        JobQueue queue = JobQueue.builder(db).handler("ship", ctx -> { }).build();
        MongoCollection<Document> orders = db.getCollection("orders");   // you enqueue jobs with it (outbox)
        Maintenance maintenance = Maintenance.builder()
                .strategy(payments).strategy(queue)                                             // each pattern's own steps
                .step("relay orders", Duration.ofSeconds(5), () -> queue.relayOutbox(orders))   // your outbox collections
                .build().start();
        // README:end
        // README:start metrics
        ConsistencyKitMeters.bind(registry, payments);       // consistencykit.committed{instance=payments,pattern=two-phase}…
        ConsistencyKitMeters.bind(registry, maintenance);    // consistencykit.maintenance.lag / .failures{step=…}
        maintenance.stop(Duration.ofSeconds(5));             // at shutdown
        // README:end
        return registry;
    }
}
