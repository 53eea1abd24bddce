package dev.consistencykit.twophase;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.function.BiConsumer;
import java.util.function.Function;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.Workload;

/**
 * Two-phase commit described once for every runner of the testkit (crash explorer, interleaving explorer, chaos): the
 * bank's accounts seeded, one operation as a process makes it on an instance of its own (by default a transfer between
 * two accounts the operation's random picks, under an id it draws), recovery as a fresh process runs it, and the
 * bank's invariants read back. A test varies the operation or adds invariants; the rest stays as it is here.
 */
final class TransferWorkload implements Workload {

    private final Map<String, Long> accounts;
    private final TransferVariant variant;
    private final StalePendingPolicy policy;
    private final BiConsumer<TwoPhaseCommit, Random> operation;
    private final Function<MongoDatabase, List<String>> invariants;

    private TransferWorkload(Map<String, Long> accounts, TransferVariant variant, StalePendingPolicy policy,
                             BiConsumer<TwoPhaseCommit, Random> operation,
                             Function<MongoDatabase, List<String>> invariants) {
        this.accounts = Map.copyOf(accounts);
        this.variant = Objects.requireNonNull(variant, "variant");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.operation = Objects.requireNonNull(operation, "operation");
        this.invariants = invariants;   // null: the bank's
    }

    /** Random transfers of 1 to 400 between {@code accounts} (named {@code a0…}), each under an id of its own. */
    static TransferWorkload transfers(Map<String, Long> accounts, TransferVariant variant, StalePendingPolicy policy) {
        int n = accounts.size();
        return new TransferWorkload(accounts, variant, policy, (tpc, random) -> {
            int from = random.nextInt(n);
            int to = (from + 1 + random.nextInt(n - 1)) % n;
            long amount = 1L + random.nextInt(400);
            tpc.transfer(Transfer.of(OperationId.of("t-" + Long.toHexString(random.nextLong())), "a" + from,
                    "a" + to, amount));
        }, null);
    }

    /** The same bank with {@code value} as its one operation. */
    TransferWorkload operation(BiConsumer<TwoPhaseCommit, Random> value) {
        return new TransferWorkload(accounts, variant, policy, value, invariants);
    }

    /**
     * The same bank, checked by {@code value} instead of the bank's invariants: for runs in which a pruner may delete
     * the records those invariants count from.
     */
    TransferWorkload checkedBy(Function<MongoDatabase, List<String>> value) {
        return new TransferWorkload(accounts, variant, policy, operation, value);
    }

    /** An instance as one process builds it, on {@code db}. */
    TwoPhaseCommit instance(MongoDatabase db) {
        return TwoPhaseCommit.builder(db).transferVariant(variant).stalePendingPolicy(policy)
                .retryPolicy(TestPolicies.FAST_RETRY).build();
    }

    @Override
    public void seed(MongoDatabase database) {
        Bank.seed(database, accounts);
    }

    @Override
    public void operate(MongoDatabase database, Random random) {
        operation.accept(instance(database), random);
    }

    @Override
    public void recover(MongoDatabase database) {
        instance(database).recover(Duration.ZERO);
    }

    /** The bank's invariants ({@link Bank#invariants}; no negative balance when reserving), or the test's own. */
    @Override
    public List<String> invariants(MongoDatabase database) {
        return invariants != null ? invariants.apply(database)
                : Bank.invariants(database, accounts, variant == TransferVariant.RESERVE_THEN_CREDIT);
    }

    @Override
    public String toString() {
        return "transfers (" + variant + ", " + policy + ")";
    }
}
