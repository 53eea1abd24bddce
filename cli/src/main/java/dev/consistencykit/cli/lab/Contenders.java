package dev.consistencykit.cli.lab;

import java.util.List;

import dev.consistencykit.twophase.TransferVariant;

/** Every contender the comparison runs: the bank-transfer contenders, then the rename contenders. */
final class Contenders {

    private Contenders() {
    }

    /** The bank-transfer contenders, then the rename contenders. */
    static List<Contender> all() {
        return List.of(new NaiveTransfers(), new TwoPhaseTransfers(TransferVariant.RESERVE_THEN_CREDIT),
                new TwoPhaseTransfers(TransferVariant.APPLY_AT_PREPARE), new LedgerTransfers(), new QueuedTransfers(),
                new VersionedAccounts(), new SyncFlagRename(), new QueuedRename());
    }
}
