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
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.versioning.VersionedStore;

/**
 * The pattern instances found in a user's database: every instance that registered itself from its
 * {@code ensureIndexes()}, under whatever collection names it uses, each rebuilt by its own pattern
 * ({@code registered(database)}). What {@code inspect} lists and {@code recover} repairs.
 *
 * @param pattern  the pattern's CLI name
 * @param strategy the instance
 * @param recover  its recovery with a staleness threshold; for the job queue only the requeue of jobs whose worker
 *                 died, since running jobs needs the application's handlers
 */
record PatternsPresent(String pattern, ConsistencyStrategy<?> strategy, Function<Duration, RecoveryReport> recover) {

    static List<PatternsPresent> on(MongoDatabase db) {
        List<PatternsPresent> present = new ArrayList<>();
        Set<String> seen = new HashSet<>();   // pattern + its main collection: an instance registered under two names once
        for (SyncFlag.Builder builder : SyncFlag.registered(db)) {
            SyncFlag sync = builder.build();
            present.add(new PatternsPresent("sync-flag", sync, sync::recover));
        }
        for (TwoPhaseCommit.Builder builder : TwoPhaseCommit.registered(db)) {
            TwoPhaseCommit tpc = builder.build();
            if (seen.add("two-phase/" + tpc.config().transactionsCollection())) {
                present.add(new PatternsPresent("two-phase", tpc, tpc::recover));
            }
        }
        for (JobQueue.Builder builder : JobQueue.registered(db)) {
            JobQueue queue = builder.build();
            if (seen.add("job-queue/" + queue.config().collection())) {
                present.add(new PatternsPresent("job-queue", queue, queue::requeue));
            }
        }
        for (Ledger.Builder builder : Ledger.registered(db)) {
            Ledger ledger = builder.build();
            if (seen.add("log-reconciliation/" + ledger.config().ledgerCollection())) {
                present.add(new PatternsPresent("log-reconciliation", ledger, ledger::recover));
            }
        }
        for (VersionedStore.Builder builder : VersionedStore.registered(db)) {
            VersionedStore store = builder.build();
            if (seen.add("versioning/" + store.config().rootsCollection())) {
                present.add(new PatternsPresent("versioning", store, store::recover));
            }
        }
        return present;
    }
}
