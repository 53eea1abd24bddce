package dev.consistencykit.logreconciliation;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

import dev.consistencykit.core.spi.Calls;
import dev.consistencykit.core.spi.Checks;
import dev.consistencykit.logreconciliation.internal.LedgerReads;

/**
 * Reads committed changes strictly in each account's sequence order, from a position the consumer keeps. A change is
 * delivered once every earlier change of its account is committed (the account cache's seqId is the watermark), so a
 * transaction that commits late is never skipped, and nothing is delivered twice.
 *
 * <p>Not thread-safe: one consumer per cursor. Save {@link #positions()} to resume after a restart.
 */
public final class LedgerCursor {

    private final LedgerReads reads;
    private final Calls calls;
    private final Supplier<List<String>> accounts;
    private final Map<String, Long> positions;

    LedgerCursor(LedgerReads reads, Calls calls, Supplier<List<String>> accounts, Map<String, Long> positions) {
        this.reads = reads;
        this.calls = calls;
        this.accounts = accounts;
        this.positions = new HashMap<>(positions);
    }

    /**
     * The next committed changes, at most {@code limit} per account, in sequence order per account; advances the
     * cursor past them.
     *
     * @throws IllegalArgumentException if {@code limit < 1}
     */
    public List<LedgerEntry> poll(int limit) {
        Checks.atLeast("limit", limit, 1);
        // the cursor moves only once the whole poll has been read, so a poll that fails (and is retried, or thrown)
        // never skips the entries it had read
        return calls.idempotent("poll cursor", () -> {
            Map<String, Long> moved = new HashMap<>(positions);
            List<LedgerEntry> out = new ArrayList<>();
            for (String account : accounts.get()) {
                long from = moved.getOrDefault(account, 0L);
                List<LedgerEntry> next = reads.entries(account, from, limit);
                if (!next.isEmpty()) {
                    moved.put(account, next.get(next.size() - 1).seqId());
                    out.addAll(next);
                }
            }
            positions.putAll(moved);
            return out;
        });
    }

    /** The last seqId delivered per account. */
    public Map<String, Long> positions() {
        return Map.copyOf(positions);
    }

    static Map<String, Long> checked(Map<String, Long> positions) {
        Objects.requireNonNull(positions, "positions");
        positions.forEach((a, p) -> {
            if (p < 0) {
                throw new IllegalArgumentException("position of " + a + " must be >= 0, was " + p);
            }
        });
        return positions;
    }
}
