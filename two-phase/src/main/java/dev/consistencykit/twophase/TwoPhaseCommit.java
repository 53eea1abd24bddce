package dev.consistencykit.twophase;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.Guarantees;
import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.MaintenanceStep;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.OutcomeUnknownException;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyBuilder;
import dev.consistencykit.core.StrategyEntry;
import dev.consistencykit.core.spi.Calls;
import dev.consistencykit.core.spi.Checks;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.Names;
import dev.consistencykit.core.spi.OwnerIds;
import dev.consistencykit.core.spi.PatternRegistry;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.twophase.internal.EncodedTransaction;
import dev.consistencykit.twophase.internal.TransactionAudit;
import dev.consistencykit.twophase.internal.TransactionCodec;
import dev.consistencykit.twophase.internal.TransactionParts;
import dev.consistencykit.twophase.internal.TransactionPruner;
import dev.consistencykit.twophase.internal.TransactionReads;
import dev.consistencykit.twophase.internal.TransactionRunner;

/**
 * Two-phase commit over a transactions collection: MongoDB's published recipe, generalised to any number of
 * participants and with its traps closed.
 *
 * <p><b>What it guarantees.</b> A transaction either commits on every participant or has no net effect on any, even
 * if any process dies at any moment: one atomic write records it, each participant is prepared by one guarded write
 * that also marks it, one compare-and-set on the transaction's state decides commit or cancel (so both can never
 * win), and each participant is then settled once. Two workers never both drive one transaction; a paused owner
 * that wakes after recovery took over, however late, can neither apply twice nor apply under a canceled transaction:
 * a participant is first reserved for the owner's attempt, the owner checks its fencing token after reserving, and
 * the prepare applies only under that attempt's own reservation, which whoever finishes the transaction consumes or
 * removes (see {@link dev.consistencykit.core.spi.OnceEffects}). Nothing is left on a participant once a transaction has
 * settled there, so a hot document carries only the transactions in flight on it. A lost acknowledgement is retried
 * and recognised, never reported as a failure. Safety never depends on clocks.
 *
 * <p><b>What a concurrent reader may see.</b> Between prepare and settle, participants carry the transaction id in
 * their {@code pendingTransactions} array. With the default {@link TransferVariant#RESERVE_THEN_CREDIT}, a reader
 * may see the source debited before the destination is credited (money in neither account, never in both); with
 * {@link TransferVariant#APPLY_AT_PREPARE} it may see a credit that is later reversed. {@link #readSettled} returns
 * documents only when no transaction is in flight on them, waiting for one; {@link #readConsistent} never waits:
 * it counts each transaction in flight entirely or not at all.
 *
 * <p>Thread-safe; any number of instances in any number of processes may share the collections.
 *
 * <pre>{@code
 * TwoPhaseCommit payments = TwoPhaseCommit.builder(database).name("payments").build();
 * payments.ensureIndexes();
 * payments.transfer(Transfer.of(OperationId.of("t-1001"), "alice", "bob", 2_500));  // 25.00, 7 round trips
 * payments.recover(Duration.ofMinutes(1));   // at start-up and periodically, from any number of processes
 * }</pre>
 */
public final class TwoPhaseCommit extends StrategyEntry<TwoPhaseTransaction, TwoPhaseConfig, TwoPhaseMetrics> {

    private final TransactionCodec codec;
    private final TransactionRunner runner;
    private final TransactionReads reads;
    private final TransactionPruner pruner;
    private final TransactionAudit audit;

    private TwoPhaseCommit(TwoPhaseConfig config, Calls calls, TransactionParts parts) {
        super(config, calls, parts.store(), parts.recovery(), parts.audit());
        this.codec = parts.codec();
        this.runner = parts.runner();
        this.reads = parts.reads();
        this.pruner = parts.pruner();
        this.audit = parts.audit();
    }

    /** A builder for an instance on {@code database}. */
    public static Builder builder(MongoDatabase database) {
        return new Builder(database);
    }

    /**
     * A builder per instance of this pattern that registered itself in {@code database} (from its
     * {@code ensureIndexes()}), with its name, collections and fields and every other setting at its default: how an
     * operator's tool rebuilds an instance without the application's code. A registration this pattern did not write
     * is skipped and logged, not obeyed.
     */
    public static List<Builder> registered(MongoDatabase database) {
        return PatternRegistry.builders(database, "two-phase", Set.of("transactions", "accounts"), Set.of("balance", "marker", "reservation"),
                r -> builder(database).name(r.name())
                        .transactionsCollection(r.collections().get("transactions"))
                        .accountsCollection(r.collections().get("accounts")).balanceField(r.fields().get("balance"))
                        .markerField(r.fields().get("marker")).reservationField(r.fields().get("reservation")));
    }

    /** An instance with the default settings. */
    public static TwoPhaseCommit on(MongoDatabase database) {
        return builder(database).build();
    }

    /**
     * Records {@code transaction} in {@code initial} for a worker ({@link #processNext()}) to run; one write.
     *
     * @throws InvalidInputException        if the transaction is invalid (nothing is written)
     * @throws IdempotencyConflictException if its id is used by a transaction with other participants
     */
    @Override
    public OperationId submit(TwoPhaseTransaction transaction) {
        EncodedTransaction encoded = codec.encode(transaction, Map.of());
        return calls.operation("submit", encoded.id(), () -> runner.submit(encoded));
    }

    /**
     * Records {@code transaction} and drives it to {@code done} or {@code canceled} in this thread. Applying the
     * same transaction again returns its outcome.
     *
     * @return committed; aborted if recovery canceled it; in flight if another process is driving it
     * @throws InvalidInputException          if the transaction is invalid (nothing is written)
     * @throws IdempotencyConflictException   if its id is used by a transaction with other participants
     * @throws TransactionCanceledException   (a subclass naming the reason) if a participant could not be prepared;
     *                                        the transaction was canceled with no net effect
     * @throws OutcomeUnknownException        if the server stopped answering; recovery will finish or undo it
     * @throws CommitStuckException           if it committed but a participant refused its commit update
     */
    @Override
    public OperationResult apply(TwoPhaseTransaction transaction) {
        EncodedTransaction encoded = codec.encode(transaction, Map.of());
        return calls.operation("apply", encoded.id(), () -> runner.apply(encoded));
    }

    /**
     * Moves {@code transfer.amount()} minor units between two documents of the configured accounts collection, in
     * the configured {@link TransferVariant}. An uncontended transfer takes 7 round trips.
     *
     * @throws InsufficientFundsException  if the source balance does not cover the amount (no net effect)
     * @throws ParticipantMissingException if an account does not exist (no net effect)
     * @throws PreconditionFailedException if an account is closed ({@code closed: true}) (no net effect)
     * @throws InvalidInputException       for a non-positive amount, equal accounts or ids that are not plain values
     */
    public OperationResult transfer(Transfer transfer) {
        EncodedTransaction encoded = codec.encode(transferTransaction(transfer),
                Map.of(0, config.balanceField()));
        return calls.operation("transfer", encoded.id(), () -> runner.apply(encoded));
    }

    /** Records a transfer for a worker to run; see {@link #transfer(Transfer)}. */
    public OperationId submitTransfer(Transfer transfer) {
        EncodedTransaction encoded = codec.encode(transferTransaction(transfer),
                Map.of(0, config.balanceField()));
        return calls.operation("submit transfer", encoded.id(), () -> runner.submit(encoded));
    }

    /**
     * The two-participant transaction a transfer stands for, in the configured variant: validated, nothing
     * written.
     */
    public TwoPhaseTransaction transferTransaction(Transfer transfer) {
        Objects.requireNonNull(transfer, "transfer");
        Object from = Ids.documentId(name(), "from", transfer.from(), codec.registry());
        Object to = Ids.documentId(name(), "to", transfer.to(), codec.registry());
        long amount = Values.positive(name(), "amount", transfer.amount());
        if (Ids.idKey(from, codec.registry()).equals(Ids.idKey(to, codec.registry()))) {
            throw new InvalidInputException(name(), "to", "to must differ from from, both were "
                    + Values.show(transfer.from()));
        }
        String balance = config.balanceField();
        String accounts = config.accountsCollection();
        Participant source = Participant.on(accounts, from)
                .when(Filters.ne("closed", true))
                .when(Filters.gte(balance, amount))
                .prepare(Updates.inc(balance, -amount))
                .rollback(Updates.inc(balance, amount));
        Participant destination = Participant.on(accounts, to)
                .when(Filters.ne("closed", true))
                .when(Filters.lte(balance, Long.MAX_VALUE - amount));
        destination = switch (config.transferVariant()) {
            case RESERVE_THEN_CREDIT -> destination.commit(Updates.inc(balance, amount));
            case APPLY_AT_PREPARE -> destination.prepare(Updates.inc(balance, amount))
                    .rollback(Updates.inc(balance, -amount));
        };
        return new TwoPhaseTransaction(transfer.id(), "transfer", List.of(source, destination));
    }

    /**
     * Claims the oldest submitted ({@code initial}) transaction and drives it in this thread. Safe from any number
     * of workers at once: each transaction is claimed by exactly one.
     *
     * @return its result (cancellations are returned as aborted results), or empty if none was waiting
     */
    public Optional<OperationResult> processNext() {
        return calls.operation("process next", null, runner::processNext);
    }

    /**
     * Deletes {@code done} and {@code canceled} transactions older than {@link TwoPhaseConfig#retention()} whose
     * recorder released them. Safe from many processes at
     * once; safety does not depend on when it runs.
     *
     * @return transactions deleted
     */
    public int prune() {
        return calls.idempotent("prune", () -> pruner.prune(config.retention()));
    }

    /**
     * Reads documents {@code ids} of {@code collection} with every transaction in flight on them counted entirely or
     * not at all, without waiting: one find, then one lookup of the transactions marked on the documents (none when
     * nothing is in flight). A committed transaction still settling is shown settled; one undecided or canceled as if
     * it had never run; no copy carries bookkeeping of either. The two reads are repeated, without sleeping, only for
     * a transaction decided in the moment between them, a few times at most; after that, or for an update that cannot
     * be replayed in memory ({@code $currentDate}), the answer names the transactions it could not place. Exact when
     * the find reads its documents as of one moment (the embedded server always; MongoDB unless the query yields:
     * keep it to one batch). Nothing is written.
     */
    public ConsistentRead readConsistent(String collection, List<?> ids) {
        return calls.read("read consistent", () -> reads.readConsistent(collection, ids));
    }

    /**
     * Reads documents {@code ids} of {@code collection} as of one moment with no transaction in flight on any of
     * them: reads them, and if none carries a reservation or an unsettled mark, reads them again and returns them only
     * if nothing changed in between (a transaction that ran between the two reads changed what it touched). Retries
     * with back-off until
     * {@code maxWait}, then answers "in flight" explicitly. Two round trips when nothing is in flight.
     */
    public SettledRead readSettled(String collection, List<?> ids, Duration maxWait) {
        return calls.read("read settled", () -> reads.readSettled(collection, ids, maxWait));
    }

    /**
     * Reads every transaction and the participants of terminal ones, and reports structural problems (illegal
     * histories, participants still marked by a terminal transaction, markers naming no transaction), the
     * transactions in flight, and the net {@code $inc} committed transactions applied to {@code field} on each
     * participant, which a reconciliation can compare with the documents. Reads whole collections: an operator's
     * tool, not a hot path.
     */
    public TwoPhaseAudit audit(String field) {
        return calls.idempotent("audit", () -> audit.audit(field));
    }

    /**
     * Recovery every 10 s (transactions stalled for {@code staleAfter}, and reservations left behind) and pruning of
     * terminal transactions older than the retention every hour.
     */
    @Override
    public List<MaintenanceStep> maintenance() {
        return List.of(MaintenanceStep.of(name() + " recover", Duration.ofSeconds(10), this::recover),
                MaintenanceStep.of(name() + " prune", Duration.ofHours(1), this::prune));
    }

    @Override
    public Guarantees guarantees() {
        String reader = config.transferVariant() == TransferVariant.RESERVE_THEN_CREDIT
                ? "may see a source debited before its destination is credited (money in neither account, never"
                  + " in both); never an uncommitted credit; readConsistent() counts each transaction entirely or not at all"
                : "may see a credit before the transaction commits, reversed if it is canceled; readConsistent()"
                  + " counts each transaction entirely or not at all";
        return new Guarantees(
                "all-or-nothing: once decided, every participant gets its commit update or its rollback",
                reader,
                "none between transactions; participants are prepared in the order given",
                "stale applied/canceling finished, stale pending rolled "
                        + (config.stalePendingPolicy() == StalePendingPolicy.ROLL_BACK ? "back" : "forward")
                        + "; takeover by compare-and-set on a fencing token");
    }

    /** Builds a {@link TwoPhaseCommit}; every setter checks its argument, {@link #build()} their combination. */
    public static final class Builder extends TwoPhaseConfig.Settings<Builder> {
        private TwoPhaseListener listener = new TwoPhaseListener() { };
        private Supplier<String> ownerIds;

        private Builder(MongoDatabase database) {
            super(database);
        }

        /** Hooks called as transactions progress. */
        public Builder listener(TwoPhaseListener value) {
            this.listener = Objects.requireNonNull(value, "listener");
            return this;
        }

        /** Unique owner names, one per drive (default: name, a random part, a counter). */
        public Builder ownerIds(Supplier<String> value) {
            this.ownerIds = Objects.requireNonNull(value, "ownerIds");
            return this;
        }

        /**
         * Builds the instance.
         *
         * @throws dev.consistencykit.core.UnsafeConfigurationException if the database's write concern is
         *                                                               unacknowledged
         * @throws IllegalStateException if the settings contradict each other
         */
        public TwoPhaseCommit build() {
            TwoPhaseConfig built = builtConfig();
            MongoDatabase db = acknowledgedDatabase();
            ServerClock time = serverClockFor(db, built);
            Supplier<String> owners = ownerIds != null ? ownerIds : OwnerIds.sequence(built.name());
            return new TwoPhaseCommit(built, calls(built), TransactionParts.of(built, db, time, listener, owners));
        }
    }
}
