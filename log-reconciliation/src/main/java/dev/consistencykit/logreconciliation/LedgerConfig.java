package dev.consistencykit.logreconciliation;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.OptionalLong;

import dev.consistencykit.core.Checks;
import dev.consistencykit.core.Inputs;
import dev.consistencykit.core.RetryPolicy;

/**
 * The immutable settings of a {@link Ledger}; built by {@link Ledger.Builder}.
 *
 * <p>Defaults: name {@value #DEFAULT_NAME}; transactions in {@value #DEFAULT_LEDGER_COLLECTION}, account caches in
 * {@value #DEFAULT_ACCOUNTS_COLLECTION}, archived transactions in {@value #DEFAULT_ARCHIVE_COLLECTION}; sequence
 * numbers learned by query ({@link SeqAllocation#QUERY}); no overdraft rule; the committer takes over transactions
 * uncommitted for 5 s ({@link #DEFAULT_STALE_AFTER}); {@link RetryPolicy#DEFAULT}; the system clock.
 *
 * @param name               the instance name
 * @param ledgerCollection   the transactions
 * @param accountsCollection the account caches: {@code {_id, balance, seqId}} (plus {@code head} with
 *                           {@link SeqAllocation#COUNTER}, and {@code checkpoint} once archived)
 * @param archiveCollection  where {@link Ledger#archive} moves old committed transactions
 * @param seqAllocation      how sequence numbers are picked
 * @param overdraftFloor     if present, a debit that would take its account below it is cancelled (with its whole
 *                           transaction) by the committer, in log order
 * @param staleAfter         how long a transaction stays uncommitted before {@link Ledger#recover()} takes it
 * @param retryPolicy        retry of transient errors
 * @param clock              the local clock server time is estimated from
 */
public record LedgerConfig(String name, String ledgerCollection, String accountsCollection, String archiveCollection,
                           SeqAllocation seqAllocation, OptionalLong overdraftFloor, Duration staleAfter,
                           RetryPolicy retryPolicy, Clock clock) {

    /** Default name: {@value}. */
    public static final String DEFAULT_NAME = "ledger";
    /** Default transactions collection: {@value}. */
    public static final String DEFAULT_LEDGER_COLLECTION = "ledger";
    /** Default account caches collection: {@value}. */
    public static final String DEFAULT_ACCOUNTS_COLLECTION = "ledgerAccounts";
    /** Default archive collection: {@value}. */
    public static final String DEFAULT_ARCHIVE_COLLECTION = "ledgerArchive";
    /** Default staleness before the committer takes a transaction over: 5 s. */
    public static final Duration DEFAULT_STALE_AFTER = Duration.ofSeconds(5);

    /**
     * @throws NullPointerException     for a null setting
     * @throws IllegalArgumentException for a threshold {@code <= 0}
     */
    public LedgerConfig {
        Objects.requireNonNull(name, "name");
        Inputs.fieldName(name, "ledgerCollection", ledgerCollection);
        Inputs.fieldName(name, "accountsCollection", accountsCollection);
        Inputs.fieldName(name, "archiveCollection", archiveCollection);
        Objects.requireNonNull(seqAllocation, "seqAllocation");
        Objects.requireNonNull(overdraftFloor, "overdraftFloor");
        Objects.requireNonNull(staleAfter, "staleAfter");
        Checks.positive("staleAfter", staleAfter);
        Objects.requireNonNull(retryPolicy, "retryPolicy");
        Objects.requireNonNull(clock, "clock");
        if (ledgerCollection.equals(accountsCollection) || ledgerCollection.equals(archiveCollection)
                || accountsCollection.equals(archiveCollection)) {
            throw new IllegalStateException("the ledger, accounts and archive collections must differ");
        }
    }
}
