package dev.consistencykit.logreconciliation;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;
import java.util.function.Function;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.Workload;

/**
 * Log reconciliation described once for every runner of the testkit: the books' accounts seeded and indexed, one
 * operation as a process makes it on a ledger of its own (by default a transfer or a three-way split between
 * accounts its random picks, applied or only appended), the committer as a fresh process runs it, and the books'
 * invariants read back. A test varies the sequence allocation, the overdraft floor, what else is seeded, the
 * operation, and adds invariants of its own.
 */
final class BooksWorkload implements Workload {

    private final Map<String, Long> opening;
    private final SeqAllocation allocation;
    private final Long floor;
    private final Consumer<MongoDatabase> alsoSeeded;
    private final Operation operation;
    private final Function<MongoDatabase, List<String>> alsoChecked;

    private BooksWorkload(Map<String, Long> opening, SeqAllocation allocation, Long floor,
                          Consumer<MongoDatabase> alsoSeeded, Operation operation,
                          Function<MongoDatabase, List<String>> alsoChecked) {
        this.opening = opening;
        this.allocation = allocation;
        this.floor = floor;
        this.alsoSeeded = alsoSeeded;
        this.operation = operation;
        this.alsoChecked = alsoChecked;
    }

    /** One operation of one process, on the database it is given and a ledger built as this workload builds it. */
    @FunctionalInterface
    interface Operation {
        void run(MongoDatabase database, Ledger ledger, Random random);
    }

    /** Random transfers and three-way splits (one in four) between {@code opening}'s accounts, named {@code a0…}. */
    static BooksWorkload transfers(Map<String, Long> opening) {
        int n = opening.size();
        return new BooksWorkload(Map.copyOf(opening), SeqAllocation.QUERY, null, db -> { }, (db, ledger, random) -> {
            OperationId id = OperationId.of("t-" + Long.toHexString(random.nextLong()));
            int a = random.nextInt(n);
            int b = (a + 1 + random.nextInt(n - 1)) % n;
            int c = (b + 1) % n == a ? (b + 2) % n : (b + 1) % n;
            long amount = 1L + random.nextInt(300);
            LedgerTransaction tx = n > 2 && random.nextInt(4) == 0
                    ? new LedgerTransaction(id, List.of(Change.debit("a" + a, amount),
                            Change.credit("a" + b, amount / 2), Change.credit("a" + c, amount - amount / 2)), true)
                    : LedgerTransaction.transfer("a" + a, "a" + b, amount).withId(id);
            if (random.nextBoolean()) {
                ledger.apply(tx);
            } else {
                ledger.append(tx);
            }
        }, db -> List.of());
    }

    /** The same books numbering by {@code value}. */
    BooksWorkload allocation(SeqAllocation value) {
        return new BooksWorkload(opening, value, floor, alsoSeeded, operation, alsoChecked);
    }

    /** The same books, cancelling what would take an account below {@code value} (also checked). */
    BooksWorkload overdraftFloor(long value) {
        return new BooksWorkload(opening, allocation, value, alsoSeeded, operation, alsoChecked);
    }

    /** The same books, with what {@code value} writes after the accounts are seeded. */
    BooksWorkload alsoSeeding(Consumer<MongoDatabase> value) {
        return new BooksWorkload(opening, allocation, floor, value, operation, alsoChecked);
    }

    /** The same books with {@code value} as the one operation. */
    BooksWorkload operation(Operation value) {
        return new BooksWorkload(opening, allocation, floor, alsoSeeded, value, alsoChecked);
    }

    /** The same books, also checked by {@code value}. */
    BooksWorkload alsoChecking(Function<MongoDatabase, List<String>> value) {
        return new BooksWorkload(opening, allocation, floor, alsoSeeded, operation, value);
    }

    /** A ledger as one process builds it, on {@code db}. */
    Ledger ledger(MongoDatabase db) {
        Ledger.Builder builder = Books.ledger(db).seqAllocation(allocation);
        return (floor == null ? builder : builder.overdraftFloor(floor)).build();
    }

    @Override
    public void seed(MongoDatabase database) {
        Books.seed(database, opening);
        Books.ledger(database).build().ensureIndexes();
        alsoSeeded.accept(database);
    }

    @Override
    public void operate(MongoDatabase database, Random random) {
        operation.run(database, ledger(database), random);
    }

    @Override
    public void recover(MongoDatabase database) {
        ledger(database).recover(Duration.ZERO);
    }

    /** The books' invariants (transfers only: the total is kept), then the test's own. */
    @Override
    public List<String> invariants(MongoDatabase database) {
        List<String> problems = new ArrayList<>(Books.invariants(database, opening, true, floor));
        problems.addAll(alsoChecked.apply(database));
        return problems;
    }

    @Override
    public String toString() {
        return "transfers (" + allocation + (floor == null ? "" : ", floor " + floor) + ")";
    }
}
