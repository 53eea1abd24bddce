package dev.consistencykit.twophase;

import java.time.Duration;


import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.StrategyConfig;

/**
 * The settings of a {@link TwoPhaseCommit}, written only by {@link TwoPhaseCommit.Builder} (from
 * {@link TwoPhaseCommit#builder}, or from an existing configuration with {@code Builder.from}),
 * which hands each instance its own copy: an instance's configuration never changes.
 *
 * <p>Defaults: name {@value #DEFAULT_NAME}; transactions in {@value #DEFAULT_TRANSACTIONS_COLLECTION}; transfers on
 * {@value #DEFAULT_ACCOUNTS_COLLECTION}.{@value #DEFAULT_BALANCE_FIELD} in {@link TransferVariant#RESERVE_THEN_CREDIT};
 * participants reserved in {@value #DEFAULT_RESERVATION_FIELD} and marked applied in {@value #DEFAULT_MARKER_FIELD};
 * an owner's
 * lease of 30 s ({@link #DEFAULT_LEASE}); {@code recover()} takes over after 60 s without progress
 * ({@link #DEFAULT_STALE_AFTER}) and rolls stale {@code pending} transactions back; at most
 * {@value #DEFAULT_MAX_PENDING_PER_DOCUMENT} unsettled transactions per document; terminal transactions kept 24 h
 * ({@link #DEFAULT_RETENTION}); {@link RetryPolicy#DEFAULT}; the system clock.
 */
public final class TwoPhaseConfig extends StrategyConfig {

    /** Default instance name: {@value}. */
    public static final String DEFAULT_NAME = "two-phase";
    /** Default transactions collection: {@value}. */
    public static final String DEFAULT_TRANSACTIONS_COLLECTION = "transactions";
    /** Default accounts collection of the transfer preset: {@value}. */
    public static final String DEFAULT_ACCOUNTS_COLLECTION = "accounts";
    /** Default balance field of the transfer preset: {@value}. */
    public static final String DEFAULT_BALANCE_FIELD = "balance";
    /** Default marker array: {@value}. */
    public static final String DEFAULT_MARKER_FIELD = "pendingTransactions";
    /** Default reservation array: {@value}. */
    public static final String DEFAULT_RESERVATION_FIELD = "reservedTransactions";
    /** Default lease: 30 s. */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
    /** Default staleness threshold of {@code recover()}: 60 s. */
    public static final Duration DEFAULT_STALE_AFTER = Duration.ofSeconds(60);
    /** Default cap of unsettled transactions per document: {@value}. */
    public static final int DEFAULT_MAX_PENDING_PER_DOCUMENT = 100;
    /** Default retention of terminal transactions: 24 h. */
    public static final Duration DEFAULT_RETENTION = Duration.ofHours(24);

    String transactionsCollection = DEFAULT_TRANSACTIONS_COLLECTION;
    String accountsCollection = DEFAULT_ACCOUNTS_COLLECTION;
    String balanceField = DEFAULT_BALANCE_FIELD;
    TransferVariant transferVariant = TransferVariant.RESERVE_THEN_CREDIT;
    String markerField = DEFAULT_MARKER_FIELD;
    String reservationField = DEFAULT_RESERVATION_FIELD;
    Duration lease = DEFAULT_LEASE;
    Duration staleAfter = DEFAULT_STALE_AFTER;
    StalePendingPolicy stalePendingPolicy = StalePendingPolicy.ROLL_BACK;
    int maxPendingPerDocument = DEFAULT_MAX_PENDING_PER_DOCUMENT;
    Duration retention = DEFAULT_RETENTION;

    TwoPhaseConfig() {
        super(DEFAULT_NAME);
    }

    /** Returns the collection of transaction documents. */
    public String transactionsCollection() {
        return transactionsCollection;
    }

    /** Returns the collection the transfer preset works on. */
    public String accountsCollection() {
        return accountsCollection;
    }

    /** Returns the balance field the transfer preset works on. */
    public String balanceField() {
        return balanceField;
    }

    /** Returns how the transfer preset moves money. */
    public TransferVariant transferVariant() {
        return transferVariant;
    }

    /**
     * Returns the array on participant documents holding the ids of transactions applied there and not yet settled.
     */
    public String markerField() {
        return markerField;
    }

    /**
     * Returns the array on participant documents holding the transactions about to apply there, {@code {o: id, n:
     * attempt}}.
     */
    public String reservationField() {
        return reservationField;
    }

    /** Returns how long an owner holds a transaction before workers may take it over. */
    public Duration lease() {
        return lease;
    }

    /** Returns how long without progress before {@code recover()} takes a transaction over. */
    @Override
    public Duration staleAfter() {
        return staleAfter;
    }

    /** Returns what recovery does with a stale {@code pending} transaction. */
    public StalePendingPolicy stalePendingPolicy() {
        return stalePendingPolicy;
    }

    /** Returns the most unsettled transactions one participant document may carry. */
    public int maxPendingPerDocument() {
        return maxPendingPerDocument;
    }

    /**
     * Returns how long terminal transactions are kept, so that a repeated {@code apply} with the same id finds its
     * result; safety does not depend on it.
     */
    public Duration retention() {
        return retention;
    }

    @Override
    protected void checkCombination() {
        if (markerField.equals(reservationField)) {
            throw new IllegalStateException("markerField and reservationField must differ: " + markerField);
        }
        if (balanceField.equals(markerField) || balanceField.equals(reservationField)) {
            throw new IllegalStateException("balanceField must differ from the marker fields: " + balanceField);
        }
        if (retention.compareTo(lease) <= 0) {
            throw new IllegalStateException("retention " + retention + " must exceed the lease " + lease);
        }
    }

    /** The default settings. */
    public static TwoPhaseConfig defaults() {
        return new TwoPhaseConfig();
    }
}
