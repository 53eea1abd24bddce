package dev.consistencykit.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.spi.Checks;

/**
 * A recovery pass that meets a record whose writes conflict with a concurrent writer on every attempt (a real engine
 * answers two writers of the same documents with a deadlock; MongoDB with {@code WriteConflict}): the pass must leave
 * that record to its next pass and go on with the others, never end with an error, and the next pass must finish it.
 *
 * <p>The check crashes {@code inFlight} operations of a {@link Workload} just after their first write (each leaves
 * something in flight), then runs the workload's recovery through a {@link FaultInjector} that answers
 * {@link FaultMode#CONFLICT} to every attempt of its first write (as many as a
 * {@link RetryPolicy#DEFAULT} makes), then recovers again without faults and checks the invariants.
 *
 * <pre>{@code
 * List<String> problems = ContendedRecovery.check(client, new Transfers(), 3);
 * assertThat(problems).isEmpty();
 * }</pre>
 */
public final class ContendedRecovery {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private ContendedRecovery() {
    }

    /**
     * The problems found, none when the recovery held.
     *
     * @param inFlight operations left in flight before the recovery, at least 2 (one contended, the others not)
     */
    public static List<String> check(MongoClient client, Workload workload, int inFlight) {
        Objects.requireNonNull(workload, "workload");
        Checks.atLeast("inFlight", inFlight, 2);
        MongoDatabase db = Sharding.of(client).applyPlan(client.getDatabase(
                MongoTarget.freshDatabaseName("contended")));
        // each simulated process runs on a thread of its own and is watched through its future, as the explorers
        // watch theirs: nothing here catches an InjectedCrash
        ExecutorService processes = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "contended-recovery");
            t.setDaemon(true);
            return t;
        });
        try {
            workload.seed(db);
            List<String> problems = new ArrayList<>();
            for (int i = 0; i < inFlight; i++) {
                FaultInjector crashing = FaultInjector.at(1, FaultMode.CRASH_AFTER);
                Random random = new Random(i);
                // left in flight, as a process that died after its first write leaves it
                Outcomes.Ended ended = Outcomes.await(processes.submit(() -> workload.operate(crashing.wrap(db),
                        random)), TIMEOUT);
                if (!ended.crashed()) {
                    problems.add("operation " + i + " was not crashed after its first write: "
                            + ended.failure().map(Outcomes::describe).orElse("it ended normally"));
                }
            }
            FaultInjector conflicting = firstWriteAlwaysConflicts();
            Outcomes.await(processes.submit(() -> workload.recover(conflicting.wrap(db))), TIMEOUT).failure()
                    .ifPresent(t -> problems.add("the recovery pass that met a contended record failed: "
                            + Outcomes.describe(t)));
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
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("contended recovery check interrupted", e);
        } finally {
            processes.shutdownNow();
            MongoTarget.drop(db);
        }
    }

    /** Conflicts on the first write and on its retries, the same write sent again at once; lets the rest through. */
    private static FaultInjector firstWriteAlwaysConflicts() {
        AtomicInteger conflicted = new AtomicInteger();
        AtomicReference<WriteSite> first = new AtomicReference<>();
        return FaultInjector.withSchedule(site -> {
            first.compareAndSet(null, site);
            WriteSite f = first.get();
            boolean again = site.method().equals(f.method()) && Objects.equals(site.collection(), f.collection())
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
