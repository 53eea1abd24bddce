package dev.consistencykit.twophase;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.CrashPointExplorer;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * Every write site of {@code apply()} × every fault mode, then recovery in a fresh instance (and by two recoverers
 * at once), with the bank's invariants read back from the server.
 */
@ExtendWith(MongoTestExtension.class)
class CrashExplorationTest {

    private static final Map<String, Long> ACCOUNTS = Bank.accounts(3, 1_000);

    static TwoPhaseTransaction threeWaySplit(OperationId id) {
        // a0 pays 90, split between a1 (60, credited at commit) and a2 (30, credited at prepare)
        return TwoPhaseTransaction.of(id,
                Participant.on(Bank.ACCOUNTS, "a0").when(Filters.gte("balance", 90L))
                        .prepare(Updates.inc("balance", -90L)).rollback(Updates.inc("balance", 90L)),
                Participant.on(Bank.ACCOUNTS, "a1").commit(Updates.inc("balance", 60L)),
                Participant.on(Bank.ACCOUNTS, "a2").prepare(Updates.inc("balance", 30L))
                        .rollback(Updates.inc("balance", -30L)));
    }

    private static CrashPointExplorer.ExplorationReport explore(MongoClient client, String name,
            TransferVariant variant, StalePendingPolicy policy, boolean threeWay, boolean recoveryFaults) {
        OperationId id = OperationId.of("tx-1");
        TransferWorkload bank = TransferWorkload.transfers(ACCOUNTS, variant, policy).operation((tpc, random) -> {
            if (threeWay) {
                tpc.apply(threeWaySplit(id));
            } else {
                tpc.transfer(Transfer.of(id, "a0", "a1", 250));
            }
        });
        return CrashPointExplorer.builder(client)
                .name(name)
                .workload(bank)
                .recoveryFaults(recoveryFaults)
                .build()
                .explore();
    }

    @Test
    void shouldKeepInvariantsWhenReserveTransferCrashesAnywhere(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = explore(client, "reserve", TransferVariant.RESERVE_THEN_CREDIT,
                StalePendingPolicy.ROLL_BACK, false, false);

        assertThat(report.writeSites()).isEqualTo(6);
        assertThat(report.scenarios()).isEqualTo(1 + 6 * FaultMode.values().length * 2);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldKeepInvariantsWhenApplyAtPrepareTransferCrashesAnywhere(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = explore(client, "apply-at-prepare",
                TransferVariant.APPLY_AT_PREPARE, StalePendingPolicy.ROLL_BACK, false, false);

        assertThat(report.writeSites()).isEqualTo(6);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldKeepInvariantsWhenThreeParticipantTransactionCrashesAnywhere(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = explore(client, "three-way", TransferVariant.RESERVE_THEN_CREDIT,
                StalePendingPolicy.ROLL_BACK, true, false);

        assertThat(report.writeSites()).isEqualTo(6);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldKeepInvariantsWhenStalePendingIsRolledForward(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = explore(client, "roll-forward",
                TransferVariant.RESERVE_THEN_CREDIT, StalePendingPolicy.ROLL_FORWARD, false, false);

        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    @Test
    void shouldKeepInvariantsWhenRecoveryItselfCrashes(MongoClient client) {
        CrashPointExplorer.ExplorationReport reserve = explore(client, "recovery-crash",
                TransferVariant.RESERVE_THEN_CREDIT, StalePendingPolicy.ROLL_BACK, false, true);
        CrashPointExplorer.ExplorationReport threeWay = explore(client, "recovery-crash-3",
                TransferVariant.APPLY_AT_PREPARE, StalePendingPolicy.ROLL_FORWARD, true, true);

        assertThat(reserve.scenarios()).isGreaterThan(1 + 5 * FaultMode.values().length * 2);
        assertThat(reserve.violations()).as(reserve.toString()).isEmpty();
        assertThat(threeWay.violations()).as(threeWay.toString()).isEmpty();
    }

    @Test
    void shouldOnlyCrashAtSitesThatExist(MongoClient client) {
        CrashPointExplorer.ExplorationReport report = CrashPointExplorer.builder(client)
                .name("sites")
                .workload(TransferWorkload.transfers(ACCOUNTS, TransferVariant.RESERVE_THEN_CREDIT,
                        StalePendingPolicy.ROLL_BACK).operation((tpc, random) ->
                        tpc.transfer(Transfer.of(OperationId.of("tx"), "a0", "a1", 250))))
                .modes(Set.of(FaultMode.CRASH_AFTER))
                .recoverers(1)
                .build().explore();

        assertThat(report.sites()).extracting(s -> s.method() + " " + s.collection()).containsExactly(
                "updateOne transactions", "bulkWrite accounts", "bulkWrite accounts", "updateOne transactions",
                "bulkWrite accounts", "updateOne transactions");
        assertThat(report.violations()).isEmpty();
    }
}
