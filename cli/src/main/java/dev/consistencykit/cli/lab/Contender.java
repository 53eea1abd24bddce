package dev.consistencykit.cli.lab;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.testkit.Workload;

/** One pattern (or the naive loop) on one workload, as the comparison drives it. */
/** One pattern (or the naive loop) on one workload, as the comparison drives it. */
public interface Contender {

    /** The entry's name in the comparison ({@code two-phase (reserve then credit)}…). */
    String name();

    /** The pattern's CLI name, or {@code naive}. */
    String pattern();

    /** {@code bank-transfer} or {@code rename}. */
    String workload();

    /** Creates the workload's documents and indexes in a fresh database. */
    void setup(MongoDatabase db);

    /** The pattern as one process uses it: built once on {@code db} (which may crash it), then used many times. */
    Instance start(MongoDatabase db);

    /** The workload's invariants after recovery, read back. */
    List<String> invariants(MongoDatabase db);

    /** One sentence: what a raw reader's anomalies mean for this pattern, and what its consistent read does. */
    String anomalies();

    /** How many background processes the README's configuration runs beside {@code writers} callers. */
    default int backgroundProcesses(int writers) {
        return 1;
    }

    /** Why the pattern offers no consistent read, or empty when it does. */
    default Optional<String> noConsistentRead() {
        return Optional.empty();
    }

    /**
     * The contender as the testkit's {@link Workload}, so that the crash explorer, the interleaving explorer and
     * the chaos runner run the comparison's workloads unchanged: seeding is {@link #setup}; one operation is one
     * process's instance making one {@link Instance#operation} and then the background work the README puts
     * beside it (the ledger's committer, the queue's worker) until none is left; recovery is a fresh process's
     * {@link Instance#recover} of everything in flight; the invariants are {@link #invariants}.
     */
    default Workload asWorkload() {
        Contender contender = this;
        return new Workload() {
            @Override
            public void seed(MongoDatabase database) {
                contender.setup(database);
            }

            @Override
            public void operate(MongoDatabase database, Random random) {
                Instance process = contender.start(database);
                process.operation(random);
                for (int pass = 0; pass < MAX_BACKGROUND_PASSES && process.background(); pass++) {
                    // each pass does one unit of the background work; stop when it finds none
                }
            }

            /**
             * Recovery, then the background work it gives back, until the invariants hold: a job whose attempt
             * failed is due again only after its back-off (at most a few milliseconds in the contenders), so each
             * pass waits a millisecond, and the passes outlast any back-off the contenders configure.
             */
            @Override
            public void recover(MongoDatabase database) {
                Instance process = contender.start(database);
                for (int pass = 0; pass < MAX_RECOVERY_PASSES; pass++) {
                    process.recover(Duration.ZERO);
                    for (int b = 0; b < MAX_BACKGROUND_PASSES && process.background(); b++) {
                        // what recovery gave back, run by the background work
                    }
                    if (contender.invariants(database).isEmpty()) {
                        return;
                    }
                    LockSupport.parkNanos(Duration.ofMillis(1).toNanos());
                }
            }

            @Override
            public List<String> invariants(MongoDatabase database) {
                return contender.invariants(database);
            }

            @Override
            public String toString() {
                return contender.name();
            }
        };
    }

    /** The most background passes {@link Contender#asWorkload()} runs after one operation. */
    int MAX_BACKGROUND_PASSES = 100;
    /** The most recovery passes {@link Contender#asWorkload()} runs, a millisecond apart. */
    int MAX_RECOVERY_PASSES = 200;

    /** One process's instance of a contender. */
    interface Instance {

        /** One operation as the caller makes it (a transfer, a rename; for the ledger an append, for the queue an enqueue). */
        void operation(Random random);

        /**
         * One pass of the work the pattern's README puts in the background (the ledger's committer, the queue's
         * workers); false when there was nothing to do. Nothing for the others.
         */
        default boolean background() {
            return false;
        }

        /** The pattern's recovery (staleness {@code staleAfter}); nothing for the naive loop. */
        void recover(Duration staleAfter);

        /** One read of the documents as they are stored; false when it breaks the workload's invariant. */
        boolean rawReadIsConsistent(Random random);

        /**
         * One read through the pattern's own consistent read ({@code readConsistent}, the ledger's {@code balances},
         * the versioned {@code read}); empty when the pattern has none, or when that read declined to answer (nothing
         * settled within its wait).
         */
        default Optional<Boolean> patternReadIsConsistent(Random random) {
            return Optional.empty();
        }
    }
}
