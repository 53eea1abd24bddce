package dev.consistencykit.twophase;

import java.time.Duration;
import java.util.Objects;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.StrategyBuilder;
import dev.consistencykit.core.StrategyConfig;
import dev.consistencykit.core.spi.Checks;
import dev.consistencykit.core.spi.Names;

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
 * ({@link #DEFAULT_RETENTION}); recovery reads stale transactions {@value #DEFAULT_RECOVERY_BATCH} at a time;
 * {@link RetryPolicy#DEFAULT}; the system clock.
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
    /** Default number of stale transactions one read of recovery takes: {@value}. */
    public static final int DEFAULT_RECOVERY_BATCH = 100;

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
    int recoveryBatch = DEFAULT_RECOVERY_BATCH;

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

    /** Returns how many stale transactions recovery reads at a time (it goes on until none is left). */
    public int recoveryBatch() {
        return recoveryBatch;
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

    /**
     * The setters of these settings, each checking its value; the entry type's builder inherits them and adds the
     * instance's parts (listener, handlers) and {@code build()}. A setting is a field with its default and a getter
     * above and its setter here: equality, {@code toString}, {@code Builder.from} and its Spring property (the
     * setter's name in kebab case) follow from them.
     *
     * @param <B> the entry type's builder
     */
    public abstract static class Settings<B extends Settings<B>> extends StrategyBuilder<B, TwoPhaseConfig> {

        /** Settings for an instance on {@code database}, every one at its default. */
        protected Settings(MongoDatabase database) {
            super(database, DEFAULT_NAME, TwoPhaseConfig::new);
        }

        /** The transactions collection (default {@value TwoPhaseConfig#DEFAULT_TRANSACTIONS_COLLECTION}). */
        public B transactionsCollection(String value) {
            config.transactionsCollection = Names.fieldName(config.name(), "transactionsCollection", value);
            return self();
        }

        /** The accounts collection of the transfer preset (default {@value TwoPhaseConfig#DEFAULT_ACCOUNTS_COLLECTION}). */
        public B accountsCollection(String value) {
            config.accountsCollection = Names.fieldName(config.name(), "accountsCollection", value);
            return self();
        }

        /** The balance field of the transfer preset (default {@value TwoPhaseConfig#DEFAULT_BALANCE_FIELD}). */
        public B balanceField(String value) {
            config.balanceField = Names.fieldPath(config.name(), "balanceField", value);
            return self();
        }

        /** How the transfer preset moves money (default {@link TransferVariant#RESERVE_THEN_CREDIT}). */
        public B transferVariant(TransferVariant value) {
            config.transferVariant = Objects.requireNonNull(value, "transferVariant");
            return self();
        }

        /** The applied-marker array on participants (default {@value TwoPhaseConfig#DEFAULT_MARKER_FIELD}). */
        public B markerField(String value) {
            config.markerField = Names.fieldName(config.name(), "markerField", value);
            return self();
        }

        /** The reservation array on participants (default {@value TwoPhaseConfig#DEFAULT_RESERVATION_FIELD}). */
        public B reservationField(String value) {
            config.reservationField = Names.fieldName(config.name(), "reservationField", value);
            return self();
        }

        /** How long an owner holds a transaction (default 30 s). */
        public B lease(Duration value) {
            config.lease = Checks.positive("lease", value);
            return self();
        }

        /** How long without progress before {@link TwoPhaseCommit#recover()} takes over (default 60 s). */
        public B staleAfter(Duration value) {
            config.staleAfter = Checks.notNegative("staleAfter", value);
            return self();
        }

        /** What recovery does with stale pending transactions (default {@link StalePendingPolicy#ROLL_BACK}). */
        public B stalePendingPolicy(StalePendingPolicy value) {
            config.stalePendingPolicy = Objects.requireNonNull(value, "stalePendingPolicy");
            return self();
        }

        /** How many stale transactions recovery reads at a time (default 100). */
        public B recoveryBatch(int value) {
            config.recoveryBatch = Checks.atLeast("recoveryBatch", value, 1);
            return self();
        }

        /** The most unsettled transactions one document may carry (default 100). */
        public B maxPendingPerDocument(int value) {
            config.maxPendingPerDocument = Checks.atLeast("maxPendingPerDocument", value, 1);
            return self();
        }

        /** How long terminal transactions are kept (default 24 h). */
        public B retention(Duration value) {
            config.retention = Checks.positive("retention", value);
            return self();
        }
    }
}
