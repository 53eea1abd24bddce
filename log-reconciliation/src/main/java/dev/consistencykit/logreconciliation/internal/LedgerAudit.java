package dev.consistencykit.logreconciliation.internal;

import static dev.consistencykit.logreconciliation.internal.LedgerSchema.ACCOUNT;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.CHANGES;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.COMMITTED;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.UNCOMMITTED;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.bson.Document;

import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.KeptRecord;
import dev.consistencykit.core.OperationView;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.core.spi.PatternInspection;
import dev.consistencykit.core.spi.StateSnapshot;
import dev.consistencykit.logreconciliation.LedgerConfig;
import dev.consistencykit.logreconciliation.LedgerMetrics;

/**
 * The operator's reads: one transaction with the balances of the accounts it changes, the transactions committed
 * lately, the ones left uncommitted, the counts by state, the records held, and the counters.
 */
public final class LedgerAudit implements PatternInspection<LedgerMetrics> {

    private final LedgerConfig config;
    private final LedgerStore store;
    private final LedgerReads reads;
    private final LedgerCounters counters;
    private final ServerClock clock;

    LedgerAudit(LedgerConfig config, LedgerStore store, LedgerReads reads, LedgerCounters counters,
                ServerClock clock) {
        this.config = config;
        this.store = store;
        this.reads = reads;
        this.counters = counters;
        this.clock = clock;
    }

    /**
     * Transactions their appenders have not released, older than {@code olderThan}: kept in the log rather than moved
     * to the archive (they are log entries either way; only where they are read from differs).
     */
    @Override
    public List<KeptRecord> kept(Duration olderThan, int limit) {
        return store.kept(clock, clock.cutoff(olderThan), limit);
    }

    /**
     * The transaction {@code id} (from the ledger, or the archive once archived) and each account it changes with
     * the balance a reader gets ({@link LedgerReads#balances}).
     */
    @Override
    public Optional<OperationView> describe(Object id) {
        Document tx = store.byId(id);
        if (tx == null) {
            Document archived = store.latestArchived(id);
            if (archived == null) {
                return Optional.empty();
            }
            tx = LedgerSchema.fromArchive(archived);
        }
        List<String> accounts = new ArrayList<>();
        for (Object c : tx.get(CHANGES) instanceof List<?> changes ? changes : List.of()) {
            if (c instanceof Document change && change.get(ACCOUNT) instanceof String account
                    && !accounts.contains(account) && accounts.size() < DESCRIBED_ACCOUNTS) {
                accounts.add(account);
            }
        }
        Map<String, Long> balances = accounts.isEmpty() ? Map.of() : reads.balances(accounts);
        List<OperationView.Touched> touched = new ArrayList<>();
        for (String account : accounts) {
            touched.add(new OperationView.Touched(config.accountsCollection(), account, new Document("_id", account)
                    .append("balance", balances.get(account)), "the balance Ledger.balances reads"));
        }
        String state = tx.get("proc") + (tx.get("state") == null ? "" : ", " + tx.get("state"));
        return Optional.of(new OperationView(id, state, tx, touched));
    }

    /** The most accounts {@link #describe} reads. */
    private static final int DESCRIBED_ACCOUNTS = 50;

    /** Transactions committed within the window, by the {@code proc_ts} index. */
    @Override
    public java.util.OptionalLong finishedSince(Duration window, int cap) {
        return java.util.OptionalLong.of(store.countCommittedSince(clock.cutoff(window), cap));
    }

    // ---------------------------------------------------------------- cancel and reads

    /** Transactions appended longer than {@code staleAfter} ago and not committed yet, oldest first. */
    @Override
    public List<InterruptedOperation> interrupted(Duration staleAfter, int limit) {
        List<InterruptedOperation> out = new ArrayList<>();
        for (Document tx : store.uncommittedBefore(clock.cutoff(staleAfter), limit)) {
            List<Object> touched = new ArrayList<>();
            tx.getList(CHANGES, Document.class, List.of()).forEach(c -> touched.add(c.get(ACCOUNT)));
            out.add(new InterruptedOperation(tx.get("_id"), UNCOMMITTED, clock.ageOf(tx.getDate("ts")
                    .toInstant()),
                    "accounts " + touched));
        }
        return out;
    }

    /** Transactions by {@code proc} from one snapshot ({@link StateSnapshot}); the oldest uncommitted one's age. */
    @Override
    public StrategyStatus status() {
        StateSnapshot snapshot = store.snapshot();
        Map<String, Long> counts = new HashMap<>(snapshot.counts());
        counts.putIfAbsent(UNCOMMITTED, 0L);
        counts.putIfAbsent(COMMITTED, 0L);
        Optional<Duration> age = snapshot.oldestOf(List.of(UNCOMMITTED)).map(clock::ageOf);
        return new StrategyStatus(config.name(), counts, counts.get(UNCOMMITTED), age);
    }

    /** The counters since this instance was built. */
    @Override
    public LedgerMetrics metrics() {
        return counters.read();
    }
}
