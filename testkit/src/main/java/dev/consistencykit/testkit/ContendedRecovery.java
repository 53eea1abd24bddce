package dev.consistencykit.testkit;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.Checks;
import dev.consistencykit.core.RetryPolicy;

/**
 * A recovery pass that meets a record whose writes conflict with a concurrent writer on every attempt (a real engine
 * answers two writers of the same documents with a deadlock; MongoDB with {@code WriteConflict}): the pass must leave
 * that record to its next pass and go on with the others, never end with an error, and the next pass must finish it.
 *
 * <p>The check crashes {@code inFlight} operations of a {@link Workload} just after their first write (each leaves
 * something in flight), then runs the workload's recovery through a {@link FaultInjector} that answers
 * {@link FaultMode#CONFLICT} to every attempt of the first write {@code contended} accepts (as many as a
 * {@link RetryPolicy#DEFAULT} makes), then recovers again without faults and checks the invariants.
 *
 * <pre>{@code
 * List<String> problems = ContendedRecovery.check(client, new Transfers(), 3, site -> true);
 * assertThat(problems).isEmpty();
 * }</pre>
 */
public final class ContendedRecovery {

    private ContendedRecovery() {
    }

    /**
     * The problems found, none when the recovery held.
     *
     * @param inFlight  operations left in flight before the recovery, at least 2 (one contended, the others not)
     * @param contended the writes of the recovery that may be the contended one; the first it accepts is answered with
     *                  a conflict on every attempt
     */
    public static List<String> check(MongoClient client, Workload workload, int inFlight,
                                     Predicate<WriteSite> contended) {
        Objects.requireNonNull(workload, "workload");
        Objects.requireNonNull(contended, "contended");
        Checks.atLeast("inFlight", inFlight, 2);
        MongoDatabase db = client.getDatabase(MongoTarget.freshDatabaseName("contended"));
        try {
            workload.seed(db);
            for (int i = 0; i < inFlight; i++) {
                FaultInjector crashing = FaultInjector.at(1, FaultMode.CRASH_AFTER);
                try {
                    workload.operate(crashing.wrap(db), new Random(i));
                } catch (InjectedCrash expected) {
                    // left in flight, as a process that died after its first write leaves it
                }
            }
            List<String> problems = new ArrayList<>();
            FaultInjector conflicting = firstContendedAlwaysConflicts(contended);
            try {
                workload.recover(conflicting.wrap(db));
            } catch (RuntimeException e) {
                problems.add("the recovery pass that met a contended record failed: " + Outcomes.describe(e));
            }
            int conflicts = conflicting.faults().size();
            if (conflicts < RetryPolicy.DEFAULT_MAX_ATTEMPTS) {
                problems.add("the recovery met " + conflicts + " conflicts, not one per attempt of a contended write"
                        + " (writes: " + conflicting.sites() + ")");
            } else if (conflicting.sites().size() <= conflicts) {
                problems.add("the recovery wrote nothing after the contended record: it did not go on with the"
                        + " others");
            }
            workload.recover(db);
            workload.invariants(db).forEach(p -> problems.add("after the next pass: " + p));
            return problems;
        } finally {
            db.drop();
        }
    }

    /** Conflicts on the first write {@code contended} accepts and on its retries; lets every other write through. */
    private static FaultInjector firstContendedAlwaysConflicts(Predicate<WriteSite> contended) {
        AtomicInteger conflicted = new AtomicInteger();
        AtomicReference<WriteSite> first = new AtomicReference<>();
        return FaultInjector.withSchedule(site -> {
            if (first.get() == null && contended.test(site)) {
                first.set(site);
            }
            WriteSite f = first.get();
            // the same write again, at once: a retry of it
            boolean again = f != null && site.method().equals(f.method())
                    && Objects.equals(site.collection(), f.collection())
                    && conflicted.get() < RetryPolicy.DEFAULT_MAX_ATTEMPTS
                    && site.number() - f.number() == conflicted.get();
            if (again) {
                conflicted.incrementAndGet();
                return Optional.of(FaultMode.CONFLICT);
            }
            return Optional.empty();
        });
    }
}
