package dev.consistencykit.dashboard;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.ReconcileReport;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncVerification;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.versioning.VersionedStore;

/**
 * One pattern instance the dashboard shows: the application's own bean, or an instance rebuilt from the registry a
 * database keeps ({@link #registered}). {@link #of} is the one place that knows what each pattern adds to the common
 * interface: a job queue's dead jobs and its requeue, the ledger's and the sync flag's checks.
 */
public final class DashboardInstance {

    /** The most lines a check lists. */
    static final int LISTED_GAPS = 100;
    /** The most ledger accounts a check reconciles. */
    static final int RECONCILED_ACCOUNTS = 100;

    private final ConsistencyStrategy<?> strategy;
    private final Function<Duration, RecoveryReport> recover;
    private final JobQueue queue;
    private final Supplier<Document> check;

    private DashboardInstance(ConsistencyStrategy<?> strategy, Function<Duration, RecoveryReport> recover,
                              JobQueue queue, Supplier<Document> check) {
        this.strategy = Objects.requireNonNull(strategy, "strategy");
        this.recover = Objects.requireNonNull(recover, "recover");
        this.queue = queue;
        this.check = check;
    }

    /**
     * {@code strategy} with what its pattern adds: a job queue's recovery is {@link JobQueue#requeue} (its own pass
     * would run jobs in the page's thread; the application's workers run what it requeues) and it has dead jobs; a
     * ledger and a sync flag have a check that reads every record.
     */
    public static DashboardInstance of(ConsistencyStrategy<?> strategy) {
        if (strategy instanceof JobQueue jobs) {
            return new DashboardInstance(jobs, jobs::requeue, jobs, null);
        }
        if (strategy instanceof Ledger ledger) {
            return new DashboardInstance(ledger, ledger::recover, null, () -> ledgerCheck(ledger));
        }
        if (strategy instanceof SyncFlag sync) {
            return new DashboardInstance(sync, sync::recover, null, () -> syncCheck(sync));
        }
        return new DashboardInstance(strategy, strategy::recover, null, null);
    }

    /** The instance. */
    public ConsistencyStrategy<?> strategy() {
        return strategy;
    }

    /** Its recovery pass with a staleness threshold (for a job queue: {@link JobQueue#requeue}). */
    public Function<Duration, RecoveryReport> recover() {
        return recover;
    }

    /** The check that reads every record, when the pattern keeps derived data to check: run only when asked. */
    public Optional<Supplier<Document>> check() {
        return Optional.ofNullable(check);
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
        return Optional.ofNullable(queue);
    }

    private static Document ledgerCheck(Ledger ledger) {
        List<String> gaps = ledger.accountsWithGaps();
        List<String> details = new ArrayList<>();
        gaps.stream().limit(LISTED_GAPS).forEach(a -> details.add("account " + a + ": a gap in its log"
                + " (reconcile with repair fills it)"));
        long problems = gaps.size();
        List<ReconcileReport> reports = ledger.reconcileAccounts(RECONCILED_ACCOUNTS);
        for (ReconcileReport r : reports) {
            problems += r.problems().size();
            r.problems().stream().limit(LISTED_GAPS - Math.min(LISTED_GAPS, details.size()))
                    .forEach(p -> details.add("account " + r.account() + ": " + p));
        }
        return new Document("check", "ledger: accounts whose log has a gap, and the cache of each of the first "
                + RECONCILED_ACCOUNTS + " accounts against its log (reconcile)")
                .append("problems", problems).append("accountsReconciled", (long) reports.size())
                .append("details", details);
    }

    private static Document syncCheck(SyncFlag sync) {
        SyncVerification v = sync.verify(false);
        return new Document("check", "stale copies: copies that differ from their master (in flight: a propagation"
                + " is under way; drifted: written behind the pattern's back)")
                .append("problems", v.driftedCopies()).append("staleCopies", v.staleCopies())
                .append("inFlightCopies", v.inFlightCopies()).append("driftedCopies", v.driftedCopies())
                .append("masters", v.masters()).append("details", v.samples());
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
