package dev.consistencykit.logreconciliation;

import java.time.Duration;
import java.util.OptionalLong;

import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.StrategyConfig;

/**
 * The settings of a {@link Ledger}, written only by {@link Ledger.Builder} (from {@link Ledger#builder},
 * or from an existing configuration with {@code Builder.from}), which hands each instance its
 * own copy: an instance's configuration never changes.
 *
 * <p>Defaults: name {@value #DEFAULT_NAME}; transactions in {@value #DEFAULT_LEDGER_COLLECTION}, account caches in
 * {@value #DEFAULT_ACCOUNTS_COLLECTION}, archived transactions in {@value #DEFAULT_ARCHIVE_COLLECTION}; sequence
 * numbers learned by query ({@link SeqAllocation#QUERY}); no overdraft rule; the committer takes over transactions
 * uncommitted for 5 s ({@link #DEFAULT_STALE_AFTER}); {@link RetryPolicy#DEFAULT}; the system clock.
 */
public final class LedgerConfig extends StrategyConfig {

    /** Default name: {@value}. */
    public static final String DEFAULT_NAME = "log-reconciliation";
    /** Default transactions collection: {@value}. */
    public static final String DEFAULT_LEDGER_COLLECTION = "ledger";
    /** Default account caches collection: {@value}. */
    public static final String DEFAULT_ACCOUNTS_COLLECTION = "ledgerAccounts";
    /** Default archive collection: {@value}. */
    public static final String DEFAULT_ARCHIVE_COLLECTION = "ledgerArchive";
    /** Default staleness before the committer takes a transaction over: 5 s. */
    public static final Duration DEFAULT_STALE_AFTER = Duration.ofSeconds(5);

    String ledgerCollection = DEFAULT_LEDGER_COLLECTION;
    String accountsCollection = DEFAULT_ACCOUNTS_COLLECTION;
    String archiveCollection = DEFAULT_ARCHIVE_COLLECTION;
    SeqAllocation seqAllocation = SeqAllocation.QUERY;
    OptionalLong overdraftFloor = OptionalLong.empty();
    Duration staleAfter = DEFAULT_STALE_AFTER;

    LedgerConfig() {
        super(DEFAULT_NAME);
    }

    /** Returns the transactions. */
    public String ledgerCollection() {
        return ledgerCollection;
    }

    /**
     * Returns the account caches: {@code {_id, balance, seqId}} (plus {@code head} with {@link
     * SeqAllocation#COUNTER}, and {@code checkpoint} once archived).
     */
    public String accountsCollection() {
        return accountsCollection;
    }

    /** Returns where {@link Ledger#archive} moves old committed transactions. */
    public String archiveCollection() {
        return archiveCollection;
    }

    /** Returns how sequence numbers are picked. */
    public SeqAllocation seqAllocation() {
        return seqAllocation;
    }

    /**
     * Returns if present, a debit that would take its account below it is canceled (with its whole transaction) by
     * the committer, in log order.
     */
    public OptionalLong overdraftFloor() {
        return overdraftFloor;
    }

    /** Returns how long a transaction stays uncommitted before {@link Ledger#recover()} takes it. */
    @Override
    public Duration staleAfter() {
        return staleAfter;
    }

    @Override
    protected void checkCombination() {
        if (ledgerCollection.equals(accountsCollection) || ledgerCollection.equals(archiveCollection)
                || accountsCollection.equals(archiveCollection)) {
            throw new IllegalStateException("the ledger, accounts and archive collections must differ");
        }
    }
}
