package dev.consistencykit.examples.cli;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.PatternRegistry;
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
 * The pattern instances found in a user's database: every instance that registered itself from its
 * {@code ensureIndexes()} ({@link PatternRegistry}, under whatever collection names it uses), every sync flag in its
 * own registry, and, for data written before the registry existed, the instances using the default collections. What
 * {@code inspect} lists and {@code recover} repairs.
 *
 * @param pattern  the pattern's CLI name
 * @param strategy the instance
 * @param recover  its recovery with a staleness threshold; for the job queue only the requeue of jobs whose worker
 *                 died, since running jobs needs the application's handlers
 */
record PatternsPresent(String pattern, ConsistencyStrategy<?> strategy, Function<Duration, RecoveryReport> recover) {

    private static final Logger LOG = LoggerFactory.getLogger(PatternsPresent.class);

    static List<PatternsPresent> on(MongoDatabase db) {
        Set<String> collections = db.listCollectionNames().into(new HashSet<>());
        List<PatternsPresent> present = new ArrayList<>();
        for (SyncFlag.Builder builder : SyncFlag.registered(db)) {
            SyncFlag sync = builder.build();
            present.add(new PatternsPresent("sync-flag", sync, sync::recover));
        }
        Set<String> seen = new HashSet<>();   // pattern + its main collection: each instance once
        for (PatternRegistry.Registration r : PatternRegistry.registered(db)) {
            try {
                PatternsPresent p = fromRegistration(db, r);
                if (p != null && seen.add(r.pattern() + "/" + mainCollection(r))) {
                    present.add(p);
                }
            } catch (ConsistencyException e) {
                LOG.warn("skipping registered {} '{}': {}", r.pattern(), r.name(), e.getMessage());
            }
        }
        if (collections.contains(JobQueueConfig.DEFAULT_COLLECTION)
                && seen.add("job-queue/" + JobQueueConfig.DEFAULT_COLLECTION)) {
            present.add(queue(JobQueue.builder(db).build()));
        }
        if (collections.contains(TwoPhaseConfig.DEFAULT_TRANSACTIONS_COLLECTION)
                && seen.add("two-phase/" + TwoPhaseConfig.DEFAULT_TRANSACTIONS_COLLECTION)) {
            TwoPhaseCommit tpc = TwoPhaseCommit.on(db);
            present.add(new PatternsPresent("two-phase", tpc, tpc::recover));
        }
        if (collections.contains(LedgerConfig.DEFAULT_LEDGER_COLLECTION)
                && seen.add("log-reconciliation/" + LedgerConfig.DEFAULT_LEDGER_COLLECTION)) {
            Ledger ledger = Ledger.on(db);
            present.add(new PatternsPresent("log-reconciliation", ledger, ledger::recover));
        }
        if (collections.contains(VersionedStoreConfig.DEFAULT_ROOTS_COLLECTION)
                && seen.add("versioning/" + VersionedStoreConfig.DEFAULT_ROOTS_COLLECTION)) {
            VersionedStore store = VersionedStore.on(db);
            present.add(new PatternsPresent("versioning", store, store::recover));
        }
        return present;
    }

    private static String mainCollection(PatternRegistry.Registration r) {
        return switch (r.pattern()) {
            case "two-phase" -> r.collections().get("transactions");
            case "job-queue" -> r.collections().get("jobs");
            case "log-reconciliation" -> r.collections().get("ledger");
            case "versioning" -> r.collections().get("roots");
            default -> r.name();
        };
    }

    /** The instance a registration describes; null for a pattern this tool does not know, or missing names. */
    private static PatternsPresent fromRegistration(MongoDatabase db, PatternRegistry.Registration r) {
        Map<String, String> c = r.collections();
        Map<String, String> f = r.fields();
        switch (r.pattern()) {
            case "two-phase" -> {
                if (!c.keySet().containsAll(List.of("transactions", "accounts"))
                        || !f.keySet().containsAll(List.of("balance", "marker", "reservation"))) {
                    return null;
                }
                TwoPhaseCommit tpc = TwoPhaseCommit.builder(db).name(r.name())
                        .transactionsCollection(c.get("transactions")).accountsCollection(c.get("accounts"))
                        .balanceField(f.get("balance")).markerField(f.get("marker"))
                        .reservationField(f.get("reservation")).build();
                return new PatternsPresent("two-phase", tpc, tpc::recover);
            }
            case "job-queue" -> {
                if (!c.containsKey("jobs")) {
                    return null;
                }
                return queue(JobQueue.builder(db).name(r.name()).collection(c.get("jobs")).build());
            }
            case "log-reconciliation" -> {
                if (!c.keySet().containsAll(List.of("ledger", "accounts", "archive"))) {
                    return null;
                }
                Ledger ledger = Ledger.builder(db).name(r.name()).collections(c.get("ledger"), c.get("accounts"),
                        c.get("archive")).build();
                return new PatternsPresent("log-reconciliation", ledger, ledger::recover);
            }
            case "versioning" -> {
                if (!c.keySet().containsAll(List.of("roots", "items", "history"))) {
                    return null;
                }
                VersionedStore store = VersionedStore.builder(db).name(r.name()).collections(c.get("roots"),
                        c.get("items"), c.get("history")).build();
                return new PatternsPresent("versioning", store, store::recover);
            }
            default -> {
                return null;
            }
        }
    }

    private static PatternsPresent queue(JobQueue queue) {
        return new PatternsPresent("job-queue", queue, queue::requeue);
    }
}
