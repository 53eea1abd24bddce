package dev.consistencykit.logreconciliation.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Filters.or;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.RecordReleases;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StateSnapshot;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.logreconciliation.LedgerConfig;
import dev.consistencykit.logreconciliation.LedgerListener;
import dev.consistencykit.logreconciliation.LedgerMetrics;

/**
 * The ledger protocol: append as one document with per-account sequence numbers; commit by deciding the transaction
 * once (cancel by the overdraft rule or keep, recording every change's {@code cacheBal}), then advancing each account's
 * cache by compare-and-set on its seqId, then marking the transaction committed. Every step is idempotent and safe
 * from many processes.
 */
public final class LedgerEngine extends LedgerReconciler {

    /** The engine over {@code database} (already checked for an acknowledged write concern). */
    public LedgerEngine(LedgerConfig config, MongoDatabase database, ServerClock clock, LedgerListener listener) {
        super(config, database, clock, listener);
    }

    // ---------------------------------------------------------------- archive and status

    /**
     * Moves committed transactions appended longer than {@code olderThan} ago to the archive: copy, raise each
     * account's checkpoint, delete. Balances stay exact (they start from the cache, which is at or past every
     * checkpoint); reconcile folds from the checkpoint. Transactions their appender has not released yet
     * ({@link RecordReleases}) stay in the ledger.
     */
    public int archive(Duration olderThan) {
        releases.flush();
        Date cutoff = clock.cutoff(olderThan);
        int moved = 0;
        // a transaction its appender has not released may still be written again by that appender's retry: kept
        List<Document> old = ledger.find(and(eq("proc", COMMITTED), lte("ts", cutoff), RecordReleases.released()))
                .sort(Sorts.ascending("ts")).into(new ArrayList<>());
        for (Document tx : old) {
            Object id = tx.get("_id");
            Document copy = new Document(tx);
            copy.put("_id", archiveKey(tx));
            config.retryPolicy().run(config.name(), id, "archive copy",
                    () -> archive.replaceOne(eq("_id", copy.get("_id")), copy, new ReplaceOptions().upsert(true)));
            for (Document c : tx.getList(CHANGES, Document.class)) {
                String account = c.getString(ACCOUNT);
                long seq = c.getLong(SEQ);
                Document checkpoint = new Document(SEQ, seq).append(BALANCE, c.getLong(CACHE_BAL));
                config.retryPolicy().run(config.name(), account, "raise checkpoint", () -> accounts.updateOne(
                        and(eq("_id", account), or(exists(CHECKPOINT, false), lte(CHECKPOINT + "." + SEQ, seq - 1))),
                        Updates.set(CHECKPOINT, checkpoint)));
            }
            config.retryPolicy().run(config.name(), id, "archive delete", () -> ledger.deleteOne(
                    and(eq("_id", id), eq("proc", COMMITTED))));
            moved++;
            archived.increment();
        }
        return moved;
    }

    /** Transactions appended longer than {@code staleAfter} ago and not committed yet, oldest first. */
    public List<InterruptedOperation> interrupted(Duration staleAfter, int limit) {
        List<InterruptedOperation> out = new ArrayList<>();
        for (Document tx : ledger.find(and(eq("proc", UNCOMMITTED), lte("ts", clock.cutoff(staleAfter))))
                .projection(Projections.include("ts", CHANGES + "." + ACCOUNT)).sort(Sorts.ascending("ts"))
                .limit(limit)) {
            List<Object> touched = new ArrayList<>();
            tx.getList(CHANGES, Document.class, List.of()).forEach(c -> touched.add(c.get(ACCOUNT)));
            out.add(new InterruptedOperation(tx.get("_id"), UNCOMMITTED, clock.ageOf(tx.getDate("ts").toInstant()),
                    "accounts " + touched));
        }
        return out;
    }

    /** Transactions by {@code proc} from one snapshot ({@link StateSnapshot}); the oldest uncommitted one's age. */
    public StrategyStatus status() {
        StateSnapshot snapshot = StateSnapshot.of(ledger, "proc", "ts");
        Map<String, Long> counts = new HashMap<>(snapshot.counts());
        counts.putIfAbsent(UNCOMMITTED, 0L);
        counts.putIfAbsent(COMMITTED, 0L);
        Optional<Duration> age = snapshot.oldestOf(List.of(UNCOMMITTED)).map(clock::ageOf);
        return new StrategyStatus(config.name(), counts, counts.get(UNCOMMITTED), age);
    }

    /** The counters since this engine was built. */
    public LedgerMetrics metrics() {
        return new LedgerMetrics(appended.sum(), collisions.sum(), headQueries.sum(), committed.sum(), canceled.sum(),
                gapsFilled.sum(), archived.sum());
    }
}
