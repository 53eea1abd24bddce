package dev.consistencykit.twophase;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.testkit.InterleavingExplorer;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * The actor table of two-phase commit, run at every driver call of a transfer (before it is sent and after its reply):
 * a recoverer, a second owner with the same id, a pruner whose clock is days ahead, an auditor (no structural problem
 * at any moment), a reader through {@code readSettled}, whose every answer must be a settled view (money
 * conserved), and one through {@code readConsistent}, which must answer at every pause with t1 counted entirely or
 * not at all.
 */
@ExtendWith(MongoTestExtension.class)
class InterleavingTest {

    private static final Map<String, Long> ACCOUNTS = Bank.accounts(3, 1_000);

    static TwoPhaseCommit tpc(MongoDatabase db) {
        return TwoPhaseCommit.builder(db).retryPolicy(TestPolicies.FAST_RETRY).build();
    }

    static InterleavingExplorer.Builder table(MongoTarget target, TransferVariant variant) {
        Transfer transfer = Transfer.of(OperationId.of("t1"), "a0", "a1", 100);
        return InterleavingExplorer.builder(target)
                .name("2pc-" + variant)
                .workload(TransferWorkload.transfers(ACCOUNTS, variant, StalePendingPolicy.ROLL_BACK)
                        .operation((tpc, random) -> tpc.transfer(transfer))
                        .checkedBy(InterleavingTest::invariants))
                .actor("recoverer", db -> {
                    tpc(db).recover(Duration.ZERO);
                    return List.of();
                })
                .actor("second owner", db -> {
                    TwoPhaseCommit.builder(db).retryPolicy(TestPolicies.FAST_RETRY).transferVariant(variant).build()
                            .transfer(transfer);
                    return List.of();
                })
                .actor("pruner", db -> {
                    TwoPhaseCommit.builder(db).retryPolicy(TestPolicies.FAST_RETRY).retention(Duration.ofDays(1))
                            .serverClock(ServerClock.unsynchronized(Clock.offset(Clock.systemUTC(),
                                    Duration.ofDays(2)))).build().prune();
                    return List.of();
                })
                .actor("auditor", db -> tpc(db).audit("balance").problems())
                .actor("settled reader", db -> {
                    SettledRead read = tpc(db).readSettled(Bank.ACCOUNTS, List.of("a0", "a1", "a2"), Duration.ZERO);
                    List<String> problems = new ArrayList<>();
                    if (read.isSettled()) {
                        long sum = read.documents().stream().mapToLong(d -> d.getLong("balance")).sum();
                        if (sum != 3_000) {
                            problems.add("a settled read summed " + sum + ": " + read.documents().stream()
                                    .map(Document::toJson).toList());
                        }
                    }
                    return problems;
                })
                .actor("consistent reader", db -> {
                    ConsistentRead read = tpc(db).readConsistent(Bank.ACCOUNTS, List.of("a0", "a1", "a2"));
                    List<Long> b = read.documents().stream().map(d -> d.getLong("balance")).toList();
                    if (!read.isResolved()) {
                        return List.of("a consistent read of a paused world was unresolved: " + read);
                    }
                    if (!b.equals(List.of(1_000L, 1_000L, 1_000L)) && !b.equals(List.of(900L, 1_100L, 1_000L))) {
                        return List.of("a consistent read counted t1 in part: " + b);
                    }
                    return read.documents().stream().filter(d -> d.containsKey("pendingTransactions")
                            || d.containsKey("reservedTransactions")).map(d -> "bookkeeping left in the view: "
                            + d.toJson()).toList();
                });
    }

    /**
     * t1 moved 100 from a0 to a1 once or not at all, as its record says while it is kept (a pruner may have deleted
     * it); nothing is left on any account; no account negative.
     */
    static List<String> invariants(MongoDatabase db) {
        List<String> problems = new ArrayList<>();
        long a0 = Bank.balance(db, "a0");
        long a1 = Bank.balance(db, "a1");
        long a2 = Bank.balance(db, "a2");
        boolean moved = a0 == 900 && a1 == 1_100;
        if (!(moved || (a0 == 1_000 && a1 == 1_000)) || a2 != 1_000) {
            problems.add("balances " + a0 + ", " + a1 + ", " + a2 + " are neither before nor after t1");
        }
        Document tx = db.getCollection(Bank.TRANSACTIONS).find(com.mongodb.client.model.Filters.eq("_id", "t1"))
                .first();
        if (tx != null) {
            String state = tx.getString("state");
            if (!"done".equals(state) && !"canceled".equals(state)) {
                problems.add("t1 is " + state + " after recovery");
            } else if ("done".equals(state) != moved) {
                problems.add("t1 is " + state + " but the balances are " + a0 + ", " + a1);
            }
        }
        for (Document account : db.getCollection(Bank.ACCOUNTS).find()) {
            for (String field : List.of("pendingTransactions", "reservedTransactions", "settledTransactions")) {
                if (!account.getList(field, Object.class, List.of()).isEmpty()) {
                    problems.add(account.get("_id") + " still carries " + field + " " + account.get(field));
                }
            }
        }
        return problems;
    }

    @Test
    void shouldKeepEveryInvariantWhenAnyActorRunsAtAnyCallOfAReserveThenCreditTransfer(MongoTarget target) {
        InterleavingExplorer.Report report = table(target, TransferVariant.RESERVE_THEN_CREDIT).build().explore();

        assertThat(report.schedules()).isEqualTo(report.calls().size() * 2 * 6);
        assertThat(report.calls()).hasSizeGreaterThanOrEqualTo(7);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldKeepEveryInvariantWhenAnyActorRunsAtAnyCallOfAnApplyAtPrepareTransfer(MongoTarget target) {
        InterleavingExplorer.Report report = table(target, TransferVariant.APPLY_AT_PREPARE).build().explore();

        assertThat(report.violations()).as(report.toString()).isEmpty();
    }
}
