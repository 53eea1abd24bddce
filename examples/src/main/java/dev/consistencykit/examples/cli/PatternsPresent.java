package dev.consistencykit.examples.cli;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobQueueConfig;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerConfig;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.twophase.TwoPhaseConfig;
import dev.consistencykit.versioning.VersionedStore;
import dev.consistencykit.versioning.VersionedStoreConfig;

/**
 * The pattern instances found in a user's database: those using their default collections, and every sync flag
 * registered by its {@code ensureIndexes()}. What {@code inspect} lists and {@code recover} repairs.
 *
 * @param pattern  the pattern's CLI name
 * @param strategy the instance
 * @param recover  its recovery with a staleness threshold; for the job queue only the requeue of jobs whose worker
 *                 died, since running jobs needs the application's handlers
 */
record PatternsPresent(String pattern, ConsistencyStrategy<?> strategy, Function<Duration, RecoveryReport> recover) {

    static List<PatternsPresent> on(MongoDatabase db) {
        Set<String> collections = db.listCollectionNames().into(new HashSet<>());
        List<PatternsPresent> present = new ArrayList<>();
        for (SyncFlag.Builder builder : SyncFlag.registered(db)) {
            SyncFlag sync = builder.build();
            present.add(new PatternsPresent("sync-flag", sync, sync::recover));
        }
        if (collections.contains(JobQueueConfig.DEFAULT_COLLECTION)) {
            JobQueue queue = JobQueue.builder(db).build();
            present.add(new PatternsPresent("job-queue", queue, staleAfter -> {
                long start = System.nanoTime();
                int requeued = queue.sweep(staleAfter);
                return new RecoveryReport(queue.name(), requeued, 0, requeued, 0,
                        Duration.ofNanos(System.nanoTime() - start));
            }));
        }
        if (collections.contains(TwoPhaseConfig.DEFAULT_TRANSACTIONS_COLLECTION)) {
            TwoPhaseCommit tpc = TwoPhaseCommit.on(db);
            present.add(new PatternsPresent("two-phase", tpc, tpc::recover));
        }
        if (collections.contains(LedgerConfig.DEFAULT_LEDGER_COLLECTION)) {
            Ledger ledger = Ledger.on(db);
            present.add(new PatternsPresent("log-reconciliation", ledger, ledger::recover));
        }
        if (collections.contains(VersionedStoreConfig.DEFAULT_ROOTS_COLLECTION)) {
            VersionedStore store = VersionedStore.on(db);
            present.add(new PatternsPresent("versioning", store, store::recover));
        }
        return present;
    }
}
