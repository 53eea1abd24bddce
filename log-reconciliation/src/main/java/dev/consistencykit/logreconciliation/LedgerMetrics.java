package dev.consistencykit.logreconciliation;

/**
 * A read-only snapshot of one {@link Ledger} instance's counters since it was built.
 *
 * @param appended      transactions this instance appended
 * @param collisions    sequence-number collisions its appends retried after
 * @param headQueries   sequence heads it learned by query (cache misses and refreshes)
 * @param committed     transactions it committed
 * @param canceled      of those, committed as canceled (by request or the overdraft rule)
 * @param gapsFilled    numbers it filled with void changes: left by an append that never happened
 *                      ({@link SeqAllocation#COUNTER}), or by a transaction it moved
 * @param moved         transactions it moved to fresh numbers: one of a wait cycle (numbers reserved in opposite
 *                      orders, {@link SeqAllocation#COUNTER}), or one appended at a number an archive had passed
 * @param archived      transactions it moved to the archive
 */
public record LedgerMetrics(long appended, long collisions, long headQueries, long committed, long canceled,
                            long gapsFilled, long moved, long archived) {
}
