package dev.consistencykit.cli.lab;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.testkit.Workload;

/**
 * A lab's pattern as the testkit's runners take it, written once per lab ({@code workload()}: its data seeded, a random
 * operation as one process makes it, recovery as a fresh process runs it, its invariants), and varied per exploration:
 * a fixed operation, another recovery, more invariants.
 *
 * @param seeding    seeds a fresh database
 * @param operation  one operation of one process, with the random the runner seeds
 * @param recovery   recovery as a fresh process runs it, for everything in flight
 * @param invariants the invariants read back, one message per violation
 */
record LabWorkload(Consumer<MongoDatabase> seeding, BiConsumer<MongoDatabase, Random> operation,
                   Consumer<MongoDatabase> recovery, Function<MongoDatabase, List<String>> invariants)
        implements Workload {

    LabWorkload {
        Objects.requireNonNull(seeding, "seeding");
        Objects.requireNonNull(operation, "operation");
        Objects.requireNonNull(recovery, "recovery");
        Objects.requireNonNull(invariants, "invariants");
    }

    /** The same pattern, with what {@code value} writes after the seeding. */
    LabWorkload alsoSeeding(Consumer<MongoDatabase> value) {
        Consumer<MongoDatabase> mine = seeding;
        return new LabWorkload(db -> {
            mine.accept(db);
            value.accept(db);
        }, operation, recovery, invariants);
    }

    /** The same pattern with {@code value} as its one operation. */
    LabWorkload operation(Consumer<MongoDatabase> value) {
        return new LabWorkload(seeding, (db, random) -> value.accept(db), recovery, invariants);
    }

    /** The same pattern, recovered by {@code value}. */
    LabWorkload recoveredBy(Consumer<MongoDatabase> value) {
        return new LabWorkload(seeding, operation, value, invariants);
    }

    /** The same pattern, checked by {@code value} instead. */
    LabWorkload checkedBy(Function<MongoDatabase, List<String>> value) {
        return new LabWorkload(seeding, operation, recovery, value);
    }

    /** The same pattern, also checked by {@code value}. */
    LabWorkload alsoChecking(Function<MongoDatabase, List<String>> value) {
        Function<MongoDatabase, List<String>> mine = invariants;
        return checkedBy(db -> {
            List<String> problems = new ArrayList<>(mine.apply(db));
            problems.addAll(value.apply(db));
            return problems;
        });
    }

    @Override
    public void seed(MongoDatabase database) {
        seeding.accept(database);
    }

    @Override
    public void operate(MongoDatabase database, Random random) {
        operation.accept(database, random);
    }

    @Override
    public void recover(MongoDatabase database) {
        recovery.accept(database);
    }

    @Override
    public List<String> invariants(MongoDatabase database) {
        return invariants.apply(database);
    }
}
