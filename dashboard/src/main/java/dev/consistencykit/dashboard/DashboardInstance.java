package dev.consistencykit.dashboard;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.versioning.VersionedStore;

/**
 * One pattern instance the dashboard shows: the application's own bean, or an instance rebuilt from the registry a
 * database keeps ({@link #registered}).
 *
 * @param strategy the instance
 * @param recover  its recovery pass with a staleness threshold: the instance's {@code recover}, except for a job
 *                 queue, whose pass would run jobs in the page's thread: there it is {@link JobQueue#requeue} (the
 *                 application's workers run what it requeues)
 */
public record DashboardInstance(ConsistencyStrategy<?> strategy, Function<Duration, RecoveryReport> recover) {

    /** Validates the components. */
    public DashboardInstance {
        Objects.requireNonNull(strategy, "strategy");
        Objects.requireNonNull(recover, "recover");
    }

    /** {@code strategy} with its own recovery ({@link JobQueue#requeue} for a job queue). */
    public static DashboardInstance of(ConsistencyStrategy<?> strategy) {
        return strategy instanceof JobQueue queue ? new DashboardInstance(queue, queue::requeue)
                : new DashboardInstance(strategy, strategy::recover);
    }

    /** The pattern, as the CLI names it. */
    public String pattern() {
        return strategy.pattern();
    }

    /** The instance's name. */
    public String name() {
        return strategy.name();
    }

    /** {@code pattern/name}: how the page and the API name the instance. */
    public String key() {
        return pattern() + "/" + name();
    }

    /** The job queue, when the instance is one: its dead jobs can be listed and replayed. */
    public Optional<JobQueue> queue() {
        return strategy instanceof JobQueue queue ? Optional.of(queue) : Optional.empty();
    }

    /**
     * Every instance registered in {@code database} (by its {@code ensureIndexes()}), each rebuilt by its own pattern
     * under the collection names it registered: what an operator's tool sees without the application's code. An
     * instance registered under two names over the same collections is listed once.
     *
     * @throws dev.consistencykit.core.ConsistencyException (typed) if the registry cannot be read
     */
    public static List<DashboardInstance> registered(MongoDatabase database) {
        List<DashboardInstance> found = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (SyncFlag.Builder builder : SyncFlag.registered(database)) {
            found.add(of(builder.build()));
        }
        for (TwoPhaseCommit.Builder builder : TwoPhaseCommit.registered(database)) {
            TwoPhaseCommit tpc = builder.build();
            if (seen.add("two-phase/" + tpc.config().transactionsCollection())) {
                found.add(of(tpc));
            }
        }
        for (JobQueue.Builder builder : JobQueue.registered(database)) {
            JobQueue queue = builder.build();
            if (seen.add("job-queue/" + queue.config().collection())) {
                found.add(of(queue));
            }
        }
        for (Ledger.Builder builder : Ledger.registered(database)) {
            Ledger ledger = builder.build();
            if (seen.add("log-reconciliation/" + ledger.config().ledgerCollection())) {
                found.add(of(ledger));
            }
        }
        for (VersionedStore.Builder builder : VersionedStore.registered(database)) {
            VersionedStore store = builder.build();
            if (seen.add("versioning/" + store.config().rootsCollection())) {
                found.add(of(store));
            }
        }
        return found;
    }
}
