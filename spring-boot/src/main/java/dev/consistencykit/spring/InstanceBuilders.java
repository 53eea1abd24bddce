package dev.consistencykit.spring;

import java.util.Map;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.CallObserver;
import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.StrategyBuilder;
import dev.consistencykit.jobqueue.JobHandler;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerConfig;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.versioning.Retention;
import dev.consistencykit.versioning.VersionedStore;
import dev.consistencykit.versioning.VersionedStoreConfig;

/** Each pattern's instance from its properties: a setting left out keeps the pattern's default. */
final class InstanceBuilders {

    private InstanceBuilders() {
    }

    private static <B extends StrategyBuilder<B, ?>> B shared(B builder, CallObserver observer, String key,
                                                            ConsistencyKitProperties.Instance p) {
        builder.name(p.getName() != null ? p.getName() : key).observer(observer);
        if (p.getOperationTimeout() != null) {
            builder.operationTimeout(p.getOperationTimeout());
        }
        if (p.getRetryAttempts() != null) {
            builder.retryPolicy(RetryPolicy.DEFAULT.withMaxAttempts(p.getRetryAttempts()));
        }
        return builder;
    }

    private static String or(String value, String otherwise) {
        return value != null ? value : otherwise;
    }

    static TwoPhaseCommit twoPhase(MongoDatabase db, CallObserver observer, String key,
                                   ConsistencyKitProperties.TwoPhase p) {
        TwoPhaseCommit.Builder b = shared(TwoPhaseCommit.builder(db), observer, key, p);
        if (p.getTransactionsCollection() != null) {
            b.transactionsCollection(p.getTransactionsCollection());
        }
        if (p.getAccountsCollection() != null) {
            b.accountsCollection(p.getAccountsCollection());
        }
        if (p.getBalanceField() != null) {
            b.balanceField(p.getBalanceField());
        }
        if (p.getLease() != null) {
            b.lease(p.getLease());
        }
        if (p.getStaleAfter() != null) {
            b.staleAfter(p.getStaleAfter());
        }
        if (p.getRetention() != null) {
            b.retention(p.getRetention());
        }
        if (p.getMaxPendingPerDocument() != null) {
            b.maxPendingPerDocument(p.getMaxPendingPerDocument());
        }
        return b.build();
    }

    static JobQueue jobQueue(MongoDatabase db, CallObserver observer, String key,
                             ConsistencyKitProperties.JobQueue p, Map<String, JobHandler> handlers,
                             dev.consistencykit.jobqueue.JobQueueListener listener) {
        JobQueue.Builder b = shared(JobQueue.builder(db), observer, key, p);
        if (p.getCollection() != null) {
            b.collection(p.getCollection());
        }
        if (p.getMaxAttempts() != null) {
            b.maxAttempts(p.getMaxAttempts());
        }
        if (p.getLease() != null) {
            b.lease(p.getLease());
        }
        if (p.getRetention() != null) {
            b.retention(p.getRetention());
        }
        if (p.getStaleAfter() != null) {
            b.staleAfter(p.getStaleAfter());
        }
        handlers.forEach(b::handler);
        if (listener != null) {
            b.listener(listener);
        }
        return b.build();
    }

    static SyncFlag syncFlag(MongoDatabase db, CallObserver observer, String key,
                             ConsistencyKitProperties.SyncFlag p) {
        SyncFlag.Builder b = shared(SyncFlag.builder(db), observer, key, p);
        if (p.getMasterCollection() != null) {
            b.master(p.getMasterCollection(), p.getMasterFields().toArray(new String[0]));
        }
        for (ConsistencyKitProperties.Target t : p.getTargets()) {
            SyncTarget target = SyncTarget.in(t.getCollection(), t.getIdField());
            if (t.getArrayField() != null) {
                target = target.inArray(t.getArrayField());
            }
            if (t.getVersionField() != null) {
                target = target.versionField(t.getVersionField());
            }
            for (Map.Entry<String, String> copy : t.getCopies().entrySet()) {
                target = target.copy(copy.getKey(), copy.getValue());
            }
            b.target(target);
        }
        if (p.getStaleAfter() != null) {
            b.staleAfter(p.getStaleAfter());
        }
        return b.build();
    }

    static Ledger ledger(MongoDatabase db, CallObserver observer, String key,
                         ConsistencyKitProperties.Ledger p) {
        Ledger.Builder b = shared(Ledger.builder(db), observer, key, p);
        if (p.getLedgerCollection() != null || p.getAccountsCollection() != null || p.getArchiveCollection() != null) {
            b.collections(or(p.getLedgerCollection(), LedgerConfig.DEFAULT_LEDGER_COLLECTION),
                    or(p.getAccountsCollection(), LedgerConfig.DEFAULT_ACCOUNTS_COLLECTION),
                    or(p.getArchiveCollection(), LedgerConfig.DEFAULT_ARCHIVE_COLLECTION));
        }
        if (p.getOverdraftFloor() != null) {
            b.overdraftFloor(p.getOverdraftFloor());
        }
        if (p.getStaleAfter() != null) {
            b.staleAfter(p.getStaleAfter());
        }
        return b.build();
    }

    static VersionedStore versioning(MongoDatabase db, CallObserver observer, String key,
                                     ConsistencyKitProperties.Versioning p) {
        VersionedStore.Builder b = shared(VersionedStore.builder(db), observer, key, p);
        if (p.getRootsCollection() != null || p.getItemsCollection() != null || p.getHistoryCollection() != null) {
            b.collections(or(p.getRootsCollection(), VersionedStoreConfig.DEFAULT_ROOTS_COLLECTION),
                    or(p.getItemsCollection(), VersionedStoreConfig.DEFAULT_ITEMS_COLLECTION),
                    or(p.getHistoryCollection(), VersionedStoreConfig.DEFAULT_HISTORY_COLLECTION));
        }
        if (p.getKeepLast() != null) {
            b.retention(Retention.keepLast(p.getKeepLast()));
        }
        if (p.getStaleAfter() != null) {
            b.staleAfter(p.getStaleAfter());
        }
        return b.build();
    }
}
