package dev.consistencykit.logreconciliation;

import java.time.Duration;
import java.util.Objects;
import java.util.OptionalLong;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.StrategyBuilder;
import dev.consistencykit.core.StrategyConfig;
import dev.consistencykit.core.spi.Checks;
import dev.consistencykit.core.spi.Names;

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

    /**
     * The setters of these settings, each checking its value; the entry type's builder inherits them and adds the
     * instance's parts (listener, handlers) and {@code build()}. A setting is a field with its default and a getter
     * above and its setter here: equality, {@code toString}, {@code Builder.from} and its Spring property (the
     * setter's name in kebab case) follow from them.
     *
     * @param <B> the entry type's builder
     */
    public abstract static class Settings<B extends Settings<B>> extends StrategyBuilder<B, LedgerConfig> {

        /** Settings for an instance on {@code database}, every one at its default. */
        protected Settings(MongoDatabase database) {
            super(database, DEFAULT_NAME, LedgerConfig::new);
        }

        /** The collection of transactions (default {@value LedgerConfig#DEFAULT_LEDGER_COLLECTION}). */
        public B ledgerCollection(String value) {
            config.ledgerCollection = Names.fieldName(config.name(), "ledgerCollection", value);
            return self();
        }

        /** The collection of account caches (default {@value LedgerConfig#DEFAULT_ACCOUNTS_COLLECTION}). */
        public B accountsCollection(String value) {
            config.accountsCollection = Names.fieldName(config.name(), "accountsCollection", value);
            return self();
        }

        /** The collection of archived transactions (default {@value LedgerConfig#DEFAULT_ARCHIVE_COLLECTION}). */
        public B archiveCollection(String value) {
            config.archiveCollection = Names.fieldName(config.name(), "archiveCollection", value);
            return self();
        }

        /**
         * The three collections at once: {@link #ledgerCollection}, {@link #accountsCollection}, {@link #archiveCollection}.
         */
        public B collections(String ledger, String accounts, String archive) {
            return ledgerCollection(ledger).accountsCollection(accounts).archiveCollection(archive);
        }

        /** How sequence numbers are picked. Default {@link SeqAllocation#QUERY}. */
        public B seqAllocation(SeqAllocation value) {
            config.seqAllocation = Objects.requireNonNull(value, "seqAllocation");
            return self();
        }

        /** Cancel, in log order, a transaction whose debit would take its account below {@code floor}. */
        public B overdraftFloor(long floor) {
            config.overdraftFloor = OptionalLong.of(floor);
            return self();
        }

        /**
         * How long a transaction stays uncommitted before {@link Ledger#recover()} takes it. Default 5 s.
         *
         * @throws IllegalArgumentException if zero or negative
         */
        public B staleAfter(Duration value) {
            config.staleAfter = Checks.positive("staleAfter", value);
            return self();
        }
    }
}
