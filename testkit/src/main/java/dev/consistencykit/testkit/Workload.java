package dev.consistencykit.testkit;

import java.util.List;
import java.util.Random;

import com.mongodb.client.MongoDatabase;

/**
 * One description of "seed, operate, recover, check" that every runner of the testkit takes: the
 * {@link CrashPointExplorer} (one operation, crashed at each write), the {@link InterleavingExplorer} (one operation,
 * paused at each call while the actors run) and the {@link ChaosRunner} (many operations by many crashing
 * processes). Write a pattern's workload once and hand it to each.
 */
public interface Workload {

    /** Creates the documents the operations refer to, in a fresh database. */
    void seed(MongoDatabase database);

    /**
     * One operation as a process of the application makes it; {@code database} may inject faults.
     *
     * @param random the seeded choices of this operation (the explorers pass one seeded with 0)
     */
    void operate(MongoDatabase database, Random random);

    /** The pattern's recovery as a fresh process runs it, for everything in flight (staleness zero). */
    void recover(MongoDatabase database);

    /** The workload's invariants, read back: one message per violation, none when they hold. */
    List<String> invariants(MongoDatabase database);
}
