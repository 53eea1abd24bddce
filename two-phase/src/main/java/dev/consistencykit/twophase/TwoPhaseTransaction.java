package dev.consistencykit.twophase;

import java.util.List;
import java.util.Objects;

import dev.consistencykit.core.OperationId;

/**
 * A change to several documents that is applied all-or-nothing by {@link TwoPhaseCommit}.
 *
 * <pre>{@code
 * TwoPhaseTransaction tx = TwoPhaseTransaction.of(OperationId.of("order-42"),
 *         Participant.on("stock", "sku-1").when(Filters.gte("free", 2)).prepare(Updates.inc("free", -2))
 *                 .rollback(Updates.inc("free", 2)),
 *         Participant.on("orders", "order-42").when(Filters.eq("status", "new")).commit(Updates.set("status", "paid")));
 * }</pre>
 *
 * @param id           the transaction's id; the same id with the same participants is the same transaction
 * @param label        a short kind, stored for inspection ({@code transfer}, {@code general}…)
 * @param participants the documents it changes, at least one, each document at most once
 */
public record TwoPhaseTransaction(OperationId id, String label, List<Participant> participants) {

    /** Copies the list and checks for nulls; everything else is checked when the transaction is submitted. */
    public TwoPhaseTransaction {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(label, "label");
        participants = List.copyOf(participants);
    }

    /** A general transaction over {@code participants}. */
    public static TwoPhaseTransaction of(OperationId id, Participant... participants) {
        return new TwoPhaseTransaction(id, "general", List.of(participants));
    }

    /** A general transaction over {@code participants}. */
    public static TwoPhaseTransaction of(OperationId id, List<Participant> participants) {
        return new TwoPhaseTransaction(id, "general", participants);
    }
}
