package dev.consistencykit.logreconciliation;

/** How an append picks each account's next sequence number. */
public enum SeqAllocation {
    /**
     * The default: learned by query from the log and cached in the process; a collision on the unique index (another
     * writer took the number) refreshes the cache and retries. An uncontended append is one write.
     */
    QUERY,
    /**
     * Reserved from a counter in the account's cache document with {@code findOneAndUpdate}: one more round trip per
     * account, no collisions. A reservation whose append never happens leaves a gap, which the committer fills with a
     * void change once it is older than the staleness threshold.
     */
    COUNTER
}
